/**
 * The one HTTP client for every request the service makes to the outside
 * (webhook deliveries, product feeds, product images). It applies the
 * OutboundPolicy at three points, so a URL that passed when it was saved
 * cannot reach our network later:
 *  1. before anything is sent (scheme, credentials, literal addresses);
 *  2. in the DNS lookup of the connection itself, so only admitted addresses
 *     are ever connected to (DNS rebinding cannot swap in a private one);
 *  3. on the connected socket's remote address, before a byte is written.
 * Redirects are never followed: a 3xx is handed back to the caller as is.
 * Every request has a deadline and a response-size cap.
 */
import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent, buildConnector, request, errors as undiciErrors } from 'undici';
import type { Dispatcher } from 'undici';
import { OutboundPolicy, OutboundRefusedError } from './outbound-policy.ts';

export type OutboundFailure = 'refused' | 'timeout' | 'too_large' | 'network';

/** A request that got no (complete) HTTP answer. `kind` is stable; the message is safe to show to the workspace. */
export class OutboundRequestError extends Error {
  override name = 'OutboundRequestError';
  readonly kind: OutboundFailure;
  constructor(kind: OutboundFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'HEAD';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole request deadline, connection to last byte. Default 15 s. */
  timeoutMs?: number;
  /** Largest response body kept. Default 1 MiB. */
  maxResponseBytes?: number;
  /** Past maxResponseBytes: keep the first bytes and stop reading (`truncate`, for logs), or fail (`error`, the default). */
  onTooLarge?: 'truncate' | 'error';
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** True when the body was cut at maxResponseBytes (onTooLarge: 'truncate'). */
  truncated: boolean;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export class OutboundClient {
  readonly policy: OutboundPolicy;
  private readonly agent: Agent;
  private readonly userAgent: string;

  constructor(options: { allowedHosts?: string; policy?: OutboundPolicy; userAgent?: string; connectTimeoutMs?: number }) {
    this.policy = options.policy ?? new OutboundPolicy(options.allowedHosts ?? '');
    this.userAgent = options.userAgent ?? 'Flipbook/1.0 (+https://github.com/flipbook)';
    const policy = this.policy;
    // Only admitted addresses come out of the lookup, whatever the name resolves to now.
    const lookup = (hostname: string, opts: LookupOptions, callback: LookupCallback): void => {
      dns.lookup(hostname, { ...opts, all: true }, (error, addresses) => {
        if (error) return callback(error, []);
        const admitted = addresses.filter((a) => policy.isAddressAllowed(a.address, hostname));
        if (admitted.length === 0) {
          return callback(Object.assign(new OutboundRefusedError('address', `${hostname} resolves to an address the service does not call.`), { code: 'EOUTBOUNDREFUSED' }), []);
        }
        if (opts.all) return callback(null, admitted);
        callback(null, admitted[0]!.address, admitted[0]!.family);
      });
    };
    const connect = buildConnector({ lookup: lookup as never, timeout: options.connectTimeoutMs ?? 10_000 });
    this.agent = new Agent({
      connect: (opts, callback) => {
        connect(opts, (error, socket) => {
          if (error) return callback(error, null);
          // Literal addresses skip the lookup; every connection is judged by where it really went.
          const remote = socket!.remoteAddress;
          if (!remote || !policy.isAddressAllowed(remote, opts.hostname)) {
            socket!.destroy();
            return callback(new OutboundRefusedError('address', 'The connection went to an address the service does not call.'), null);
          }
          callback(null, socket!);
        });
      },
      keepAliveTimeout: 10_000,
      connections: 64,
    });
  }

  async request(url: string, options: OutboundRequest = {}): Promise<OutboundResponse> {
    let target: URL;
    try {
      target = this.policy.checkUrl(url);
    } catch (error) {
      throw new OutboundRequestError('refused', (error as Error).message, { cause: error });
    }
    const timeoutMs = options.timeoutMs ?? 15_000;
    const maxBytes = options.maxResponseBytes ?? 1024 * 1024;
    // One controller per request, aborted by the deadline or the caller's signal (cheaper than AbortSignal.timeout +
    // AbortSignal.any, whose composite signals pile up on a long-lived caller signal, at thousands of requests a second).
    const controller = new AbortController();
    const deadline = { aborted: false };
    const timer = setTimeout(() => {
      deadline.aborted = true;
      controller.abort(new DOMException('The request timed out.', 'TimeoutError'));
    }, timeoutMs);
    const callerSignal = options.signal;
    const onAbort = () => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) onAbort();
    else callerSignal?.addEventListener('abort', onAbort, { once: true });
    const signal = controller.signal;
    try {
      return await this.send(target, options, signal, deadline, timeoutMs, maxBytes);
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
    }
  }

  private async send(target: URL, options: OutboundRequest, signal: AbortSignal, deadline: { aborted: boolean }, timeoutMs: number, maxBytes: number): Promise<OutboundResponse> {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(target, {
        dispatcher: this.agent,
        method: options.method ?? 'GET',
        headers: { 'user-agent': this.userAgent, ...options.headers },
        body: options.body,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (error) {
      throw this.failure(error, deadline, timeoutMs);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    try {
      for await (const chunk of response.body) {
        const buffer = chunk as Buffer;
        if (size + buffer.length > maxBytes) {
          if (options.onTooLarge !== 'truncate') {
            response.body.destroy();
            throw new OutboundRequestError('too_large', `The response is larger than ${maxBytes} bytes.`);
          }
          chunks.push(buffer.subarray(0, maxBytes - size));
          size = maxBytes;
          truncated = true;
          response.body.destroy();
          break;
        }
        chunks.push(buffer);
        size += buffer.length;
      }
    } catch (error) {
      if (error instanceof OutboundRequestError) throw error;
      throw this.failure(error, deadline, timeoutMs);
    }
    return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks), truncated };
  }

  private failure(error: unknown, deadline: { aborted: boolean }, timeoutMs: number): OutboundRequestError {
    const cause = (error as { cause?: unknown })?.cause;
    const refused = error instanceof OutboundRefusedError ? error : cause instanceof OutboundRefusedError ? cause : null;
    if (refused) return new OutboundRequestError('refused', refused.message, { cause: error });
    if (deadline.aborted || error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError || error instanceof undiciErrors.ConnectTimeoutError) {
      return new OutboundRequestError('timeout', `No complete answer within ${Math.round(timeoutMs / 100) / 10} s.`, { cause: error });
    }
    const code = (error as { code?: string })?.code ?? (cause as { code?: string } | undefined)?.code;
    const described = code === 'ECONNREFUSED' ? 'The connection was refused.' : code === 'ENOTFOUND' ? 'The host could not be resolved.' : code === 'ECONNRESET' ? 'The connection was reset.' : `The request failed${code ? ` (${code})` : ''}.`;
    return new OutboundRequestError('network', described, { cause: error });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

export { OutboundPolicy, OutboundRefusedError };
