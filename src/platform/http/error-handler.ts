/**
 * Every failure leaves the API in one envelope: `{ error: { message, type, details? } }`.
 * Validation problems become 422 with field → messages; framework errors get
 * their own types; anything unexpected is logged and answered as a plain 500
 * with no internal detail.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERRORS, isAppError, type ErrorDetails, type ErrorType } from '../errors.ts';

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

const CONTEXT_PREFIX: Record<string, string> = { body: '', querystring: '', params: '', headers: 'header ' };

function fieldOf(error: AjvError): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') path.push(error.params.missingProperty);
  return path.join('.') || '_';
}

function messageOf(error: AjvError, field: string): string {
  switch (error.keyword) {
    case 'required':
      return `The ${field} field is required.`;
    case 'additionalProperties':
      return `Unknown field "${String(error.params.additionalProperty)}".`;
    case 'enum':
      return `The ${field} field must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}.`;
    case 'const':
      return `The ${field} field must be ${JSON.stringify(error.params.allowedValue)}.`;
    default:
      return `The ${field} field ${error.message ?? 'is invalid'}.`;
  }
}

/** Turns Ajv's errors into the spec's `details`: field → messages. anyOf/const noise is folded. */
export function validationDetails(errors: AjvError[], context?: string): ErrorDetails {
  const details: ErrorDetails = {};
  const unionFields = new Set(errors.filter((e) => e.keyword === 'anyOf').map(fieldOf));
  for (const error of errors) {
    const field = fieldOf(error);
    const prefix = context ? (CONTEXT_PREFIX[context] ?? '') : '';
    const name = prefix + field;
    let message: string;
    if (unionFields.has(field)) {
      if (error.keyword !== 'anyOf') continue;
      const allowed = errors
        .filter((e) => fieldOf(e) === field && e.keyword === 'const')
        .map((e) => JSON.stringify(e.params.allowedValue));
      message = allowed.length ? `The ${field} field must be one of: ${allowed.join(', ')}.` : `The ${field} field is invalid.`;
    } else {
      message = messageOf(error, field);
    }
    const messages = (details[name] ??= []);
    if (!messages.includes(message)) messages.push(message);
  }
  return details;
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.headers) for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  const body: { error: { message: string; type: string; details?: ErrorDetails } } = { error: { message: error.message, type: error.type } };
  if (error.details) body.error.details = error.details;
  return reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

const DRAIN_LIMIT_BYTES = 1024 * 1024;

/** The type of a framework error's 4xx status, for errors that do not name one. */
const TYPE_OF_STATUS: Record<number, ErrorType> = {
  400: 'BadRequestException', 404: 'RouteNotFoundException', 405: 'MethodNotAllowedException', 408: 'RequestTimeoutException', 413: 'PayloadTooLargeException',
  414: 'URITooLongException', 415: 'UnsupportedMediaTypeException', 431: 'RequestHeaderFieldsTooLargeException',
};

function sentContentType(request: FastifyRequest): string {
  const sent = request.headers['content-type'];
  return sent ? JSON.stringify(sent.split(';')[0]!.trim().slice(0, 100)) : 'none';
}

function translate(error: FastifyError & { validation?: AjvError[]; validationContext?: string }, request: FastifyRequest): AppError | null {
  if (error.validation) return ERRORS.validation(validationDetails(error.validation, error.validationContext));
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return ERRORS.payloadTooLarge('The request body is larger than this server accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return ERRORS.unsupportedMediaType(`Content-Type ${sentContentType(request)} is not accepted here; send application/json (or multipart/form-data for uploads and brand writes).`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return ERRORS.badRequest('The body is empty but Content-Type is application/json: send a JSON body or no Content-Type.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return ERRORS.badRequest('The body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return ERRORS.badRequest('The Content-Length header does not match the body.');
    case 'FST_ERR_BAD_URL':
      return ERRORS.badRequest('The URL is malformed (an invalid percent-encoding).');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError(414, 'URITooLongException', 'A path segment of the URL is too long.');
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return ERRORS.payloadTooLarge(error.message);
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return ERRORS.unsupportedMediaType(`Content-Type ${sentContentType(request)} is not accepted here; this operation takes multipart/form-data.`);
  }
  if (error instanceof SyntaxError && (error as { statusCode?: number }).statusCode === 400) return ERRORS.badRequest('The body is not valid JSON.');
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return new AppError(TYPE_OF_STATUS[status] ? status : 400, TYPE_OF_STATUS[status] ?? 'BadRequestException', error.message);
  return null;
}

/** Turns any error into the envelope; unexpected ones are logged and answered 500 without detail. */
export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const known = isAppError(error) ? error : translate(error, request);
  // The body was not read to its end (refused from its headers, or cut off at a limit): when what is
  // left may be large (over 1 MB, or of unknown length), close the connection after the answer, so the
  // rest is not read only to be thrown away. A small rest is drained, so the client, still sending,
  // reads the answer instead of a broken pipe.
  // A request without a body (no Content-Length, no Transfer-Encoding) has nothing left to read, though
  // `complete` is still false while its onRequest hooks run (a 401 or 429 of the guard): keep its connection.
  const hasBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
  if (hasBody && !request.raw.complete) {
    const length = Number(request.headers['content-length'] ?? NaN);
    if (!(length <= DRAIN_LIMIT_BYTES)) reply.header('connection', 'close');
  }
  if (known) {
    if (known.status >= 500) request.log.error({ err: error }, known.message);
    return sendError(reply, known);
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendError(reply, ERRORS.internal());
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(handleError);
}

/**
 * Errors of the HTTP parser, before any route (a header block or URL over
 * Node's limit, a malformed request line, a timeout), answered on the socket
 * in the same envelope. Pass as Fastify's `clientErrorHandler`.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
  const [status, type, message]: [number, ErrorType, string] =
    error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'RequestHeaderFieldsTooLargeException', 'The request line and headers are larger than this server accepts.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'RequestTimeoutException', 'The request took too long to arrive.']
        : [400, 'BadRequestException', 'The request is not valid HTTP.'];
  const body = JSON.stringify({ error: { message, type } });
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

/** 404 for unknown paths; 405 with Allow when the path exists under other methods. */
export function registerNotFound(app: FastifyInstance): void {
  const patterns: { method: string; regex: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const source = route.url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    for (const method of methods) patterns.push({ method, regex: new RegExp(`^${source}$`) });
  });
  app.setNotFoundHandler((request, reply) => {
    const raw = request.url.split('?')[0]!;
    const path = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw; // trailing slashes are ignored, as the router does
    const allowed = [...new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.method))].filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      reply.header('allow', allowed.join(', '));
      return sendError(reply, new AppError(405, 'MethodNotAllowedException', `${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`));
    }
    return sendError(reply, ERRORS.routeNotFound(request.method, path));
  });
}
