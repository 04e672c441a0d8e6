/** pino, with secrets kept out of every line: keys in headers or in the URL, cookies, passwords. */
import pino, { type Logger } from 'pino';
import type { Config } from './config/env.ts';

const SECRET_QUERY = /([?&](?:api_key|token|signature)=)[^&#]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[REDACTED]');
}

export function createLogger(config: Pick<Config, 'LOG_LEVEL' | 'LOG_PRETTY'>): Logger {
  return pino({
    level: config.LOG_LEVEL,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["idempotency-key"]', '*.password', '*.pdf_password', '*.secret', '*.key'],
      censor: '[REDACTED]',
    },
    serializers: {
      req(request: { method: string; url: string; hostname?: string; ip?: string; id?: string }) {
        return { method: request.method, url: redactUrl(request.url), hostname: request.hostname, remoteAddress: request.ip };
      },
      err: pino.stdSerializers.err,
    },
    ...(config.LOG_PRETTY ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss' } } } : {}),
  });
}
