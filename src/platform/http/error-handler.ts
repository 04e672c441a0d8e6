/**
 * Every failure leaves the API in one envelope: `{ error: { message, type, details? } }`.
 * Validation problems become 422 with field → messages; framework errors get
 * their own types; anything unexpected is logged and answered as a plain 500
 * with no internal detail.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { AppError, ERRORS, isAppError, type ErrorDetails } from '../errors.ts';

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

function translate(error: FastifyError & { validation?: AjvError[]; validationContext?: string }): AppError | null {
  if (error.validation) return ERRORS.validation(validationDetails(error.validation, error.validationContext));
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return ERRORS.payloadTooLarge('The request body is larger than this server accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return ERRORS.unsupportedMediaType(`Unsupported Content-Type ${JSON.stringify(error.message.split(': ').pop())}; send application/json (or multipart/form-data for uploads).`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return ERRORS.badRequest('The body is empty but Content-Type is application/json: send a JSON body or no Content-Type.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return ERRORS.badRequest('The body is not valid JSON.');
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return ERRORS.payloadTooLarge(error.message);
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return ERRORS.unsupportedMediaType('This operation takes multipart/form-data.');
  }
  if (error instanceof SyntaxError && (error as { statusCode?: number }).statusCode === 400) return ERRORS.badRequest('The body is not valid JSON.');
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return new AppError(status, 'BadRequestException', error.message);
  return null;
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = isAppError(error) ? error : translate(error);
    if (known) {
      if (known.status >= 500) request.log.error({ err: error }, known.message);
      return sendError(reply, known);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, ERRORS.internal());
  });
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
    for (const method of methods) patterns.push({ method, regex: new RegExp(`^${source}/?$`) });
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = [...new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.method))].filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(reply, new AppError(405, 'MethodNotAllowedException', `${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`));
    }
    return sendError(reply, ERRORS.routeNotFound(request.method, path));
  });
}
