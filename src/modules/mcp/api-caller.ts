/**
 * The MCP tools are clients of the public API: every tool call is one or more
 * /v1 requests made in-process with the caller's own bearer token, so scopes,
 * plans, rate limits, workspace confinement and validation are the API's,
 * exactly, and a refusal carries the API's own words.
 */
import type { FastifyInstance } from 'fastify';

// The answers are the API's JSON, documented by its OpenAPI schemas; the tools read the few fields they show.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ApiAnswer<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Record<string, string | string[] | number | undefined>;
}

export type ApiCall = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, init?: { contentType?: string; raw?: Buffer }) => Promise<ApiAnswer>;

/** An error answer of the API, its message in words (what the model reads). */
export class ApiRefusal extends Error {
  readonly status: number;
  readonly type: string | undefined;
  constructor(status: number, message: string, type?: string) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

export function apiCaller(app: FastifyInstance, token: string): ApiCall {
  return async (method, path, body, init = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    let payload: string | Buffer | undefined;
    if (init.raw) {
      payload = init.raw;
      headers['content-type'] = init.contentType ?? 'application/octet-stream';
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const response = await app.inject({ method, url: path, headers, payload });
    let parsed: unknown = response.body;
    try {
      parsed = JSON.parse(response.body);
    } catch {
      // CSV and other text answers stay text
    }
    return { status: response.statusCode, body: parsed, text: response.body, headers: response.headers };
  };
}

/** The answer's body when it is a success, else an ApiRefusal in the API's words. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function expectOk<T = any>(answer: ApiAnswer<T>): T {
  if (answer.status >= 200 && answer.status < 300) return answer.body;
  const error = (answer.body as { error?: { message?: string; type?: string; details?: Record<string, string[]> } } | undefined)?.error;
  const details = error?.details ? ` ${Object.entries(error.details).map(([k, v]) => `${k}: ${v.join(' ')}`).join('; ')}` : '';
  throw new ApiRefusal(answer.status, `${error?.message ?? `The API answered ${answer.status}.`}${details}`, error?.type);
}
