/**
 * pino, with secrets and readers' data kept out of every line. Three places
 * do it, so no call site has to remember:
 *
 * - the `req` serializer logs the URL through redactUrl(): secret query
 *   parameters are recognised by their *decoded* name (the way the router
 *   reads them, so `?api%5Fkey=` is caught like `?api_key=`), and secret path
 *   segments (a sign-in link's token) are replaced by a short hash prefix an
 *   operator can match against the stored token hash;
 * - the `err` serializer (serializeError) drops what database errors carry
 *   about the statement's values: Drizzle's and PGlite's `params`, the
 *   "params:" tail of Drizzle's message and stack, PostgreSQL's `detail`
 *   (`Key (email)=(ann@example.com) already exists`) and `where`, and quoted
 *   input echoed in messages (`invalid input syntax for type integer: "…"`);
 * - `redact` paths censor headers and fields named like secrets.
 *
 * Request lines carry no client address: on the reader's routes it is a
 * reader's personal data.
 */
import { createHash } from 'node:crypto';
import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream, type Level, type Logger } from 'pino';
import type { Config } from './config/env.ts';

const REDACTED = '[REDACTED]';

/** Query parameters whose values are secrets, compared with the decoded, lower-cased name. */
export const SECRET_QUERY_PARAMETERS = new Set(['api_key', 'token', 'signature', 'access_token', 'password', 'secret', 'code', 'refresh_token', 'device_code', 'user_code', 'client_secret', 'code_verifier']);

/**
 * Path patterns whose first capture group is a secret (a usable token). Add a
 * route's pattern here when its path carries one.
 */
export const SECRET_PATH_SEGMENTS: RegExp[] = [/^(?:\/read\/[^/]+\/access\/)([^/]+)/];

/** A value safe to log in place of a token: the first 12 hex digits of its SHA-256 (what the database stores in full). */
export function tokenHashPrefix(token: string): string {
  return `[sha256:${createHash('sha256').update(token).digest('hex').slice(0, 12)}]`;
}

/** Percent-decoding as the query-string parser does it ('+' is a space); the raw text when malformed. */
function decodeQueryName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/** The decoded name of one `name=value` pair of a query string. */
export function queryParameterName(pair: string): string {
  const eq = pair.indexOf('=');
  return decodeQueryName(eq === -1 ? pair : pair.slice(0, eq));
}

export function isSecretQueryParameter(decodedName: string): boolean {
  return SECRET_QUERY_PARAMETERS.has(decodedName.trim().toLowerCase());
}

export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  let path = queryStart === -1 ? url : url.slice(0, queryStart);
  for (const pattern of SECRET_PATH_SEGMENTS) {
    path = path.replace(pattern, (match: string, secret: string) => match.slice(0, match.length - secret.length) + tokenHashPrefix(decodeQueryName(secret)));
  }
  if (queryStart === -1) return path;
  const hashAt = url.indexOf('#', queryStart);
  const query = url.slice(queryStart + 1, hashAt === -1 ? undefined : hashAt);
  const pairs = query.split('&').map((pair) => {
    if (!isSecretQueryParameter(queryParameterName(pair))) return pair;
    const eq = pair.indexOf('=');
    return `${eq === -1 ? pair : pair.slice(0, eq)}=${REDACTED}`;
  });
  return `${path}?${pairs.join('&')}`;
}

/** Properties of errors that hold a statement's values or the input that failed; never logged. */
const VALUE_PROPERTIES = new Set(['params', 'parameters', 'values', 'queryOptions', 'detail', 'where', 'internalQuery', 'hint', 'body', 'payload', 'data', 'headers', 'config', 'request', 'response']);

/**
 * Drops what an error message says about values: Drizzle's "params:" tail,
 * quoted input PostgreSQL echoes, and e-mail addresses (an SMTP refusal names
 * the recipient).
 */
export function scrubErrorText(text: string): string {
  return text
    .replace(/\nparams: [\s\S]*?(?=\n\s+at |$)/g, '\nparams: [REDACTED]')
    .replace(/((?:invalid input syntax|invalid input value|malformed [\w ]+ literal|invalid byte sequence)[^:\n]*: )"[^\n]*"/gi, `$1"${REDACTED}"`)
    .replace(/[\w.%+-]+@(?:[\w-]+\.)+[A-Za-z]{2,}\b/g, '[email]');
}

type SerializedError = Record<string, unknown>;

/** pino's `err` serializer: type, message, stack, code and the other plain facts of an error and its causes, without values. */
export function serializeError(error: unknown, depth = 0): SerializedError | unknown {
  if (!(error instanceof Error) && (typeof error !== 'object' || error === null)) return typeof error === 'string' ? scrubErrorText(error) : error;
  const source = error as Record<string, unknown> & { message?: unknown; stack?: unknown; name?: unknown; cause?: unknown; errors?: unknown };
  const out: SerializedError = {
    type: error instanceof Error ? error.constructor.name : 'Object',
    message: typeof source.message === 'string' ? scrubErrorText(source.message) : undefined,
  };
  if (typeof source.stack === 'string') out.stack = scrubErrorText(source.stack);
  for (const [name, value] of Object.entries(source)) {
    if (name in out || name === 'cause' || name === 'errors' || VALUE_PROPERTIES.has(name)) continue;
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) out[name] = typeof value === 'string' ? scrubErrorText(value) : value;
  }
  if (depth < 5) {
    if (source.cause !== undefined) out.cause = serializeError(source.cause, depth + 1);
    if (Array.isArray(source.errors)) out.errors = source.errors.slice(0, 10).map((e) => serializeError(e, depth + 1));
  }
  return out;
}

export function createLogger(config: Pick<Config, 'LOG_LEVEL' | 'LOG_PRETTY'>, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level: config.LOG_LEVEL,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["idempotency-key"]', '*.password', '*.pdf_password', '*.secret', '*.key', '*.token'],
      censor: REDACTED,
    },
    serializers: {
      // No client address: on the reader's routes it is a reader's (rate limits key on a salted hash of it instead).
      req(request: { method: string; url: string; hostname?: string }) {
        return { method: request.method, url: redactUrl(request.url), hostname: request.hostname };
      },
      err: serializeError,
    },
  };
  if (destination) return pino(options, destination);
  return pino({ ...options, ...(config.LOG_PRETTY ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss' } } } : {}) });
}

/**
 * Fastify's `childLoggerFactory`: a request's logger (`request.log`, bound to
 * the request id) made only when the request logs something at an enabled
 * level. pino builds a child eagerly (it serialises the bindings), which cost
 * about 3% of an authenticated read's CPU on requests that never log
 * (bench:api profile); the lines written are the same.
 */
export function lazyChildLoggerFactory(logger: Logger, bindings: Bindings, options: ChildLoggerOptions): Logger {
  // A route's own level or serializers: pino's child, as Fastify would make it.
  if (options.level || options.serializers) return logger.child(bindings, options);
  return new LazyChildLogger(logger, bindings) as unknown as Logger;
}

class LazyChildLogger {
  private readonly parent: Logger;
  private readonly bound: Bindings;
  private made: Logger | undefined;

  constructor(parent: Logger, bindings: Bindings) {
    this.parent = parent;
    this.bound = bindings;
  }

  private get real(): Logger {
    return (this.made ??= this.parent.child(this.bound));
  }

  private write(level: Level, args: unknown[]): void {
    if (this.made) (this.made[level] as (...a: unknown[]) => void)(...args);
    else if (this.parent.isLevelEnabled(level)) (this.real[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string { return this.made ? this.made.level : this.parent.level; }
  set level(level: string) { this.real.level = level; }
  fatal(...args: unknown[]): void { this.write('fatal', args); }
  error(...args: unknown[]): void { this.write('error', args); }
  warn(...args: unknown[]): void { this.write('warn', args); }
  info(...args: unknown[]): void { this.write('info', args); }
  debug(...args: unknown[]): void { this.write('debug', args); }
  trace(...args: unknown[]): void { this.write('trace', args); }
  silent(): void {}
  isLevelEnabled(level: string): boolean { return (this.made ?? this.parent).isLevelEnabled(level); }
  bindings(): Bindings { return this.real.bindings(); }
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger { return this.real.child(bindings, options); }
}
