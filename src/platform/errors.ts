/**
 * The catalogue of errors the API answers with. Services throw these; one
 * error handler turns them into `{ error: { message, type, details? } }`.
 * `type` values are stable: clients branch on status and type, never on text.
 */

export type ErrorDetails = Record<string, string[]>;

export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;
  readonly type: string;
  readonly details?: ErrorDetails;
  readonly headers?: Record<string, string>;

  constructor(status: number, type: string, message: string, details?: ErrorDetails, headers?: Record<string, string>) {
    super(message);
    this.status = status;
    this.type = type;
    if (details) this.details = details;
    if (headers) this.headers = headers;
  }
}

/** Every error `type` the API can answer with, and its HTTP status. */
export const ERROR_TYPES = {
  BadRequestException: 400,
  AuthenticationException: 401,
  AuthorizationException: 403,
  PlanRestrictionException: 403,
  CsrfException: 403,
  ModelNotFoundException: 404,
  RouteNotFoundException: 404,
  MethodNotAllowedException: 405,
  ConflictException: 409,
  IdempotencyInProgressException: 409,
  RequestTimeoutException: 408,
  GoneException: 410,
  PayloadTooLargeException: 413,
  URITooLongException: 414,
  UnsupportedMediaTypeException: 415,
  ValidationException: 422,
  IdempotencyKeyReusedException: 422,
  RateLimitException: 429,
  RequestHeaderFieldsTooLargeException: 431,
  InternalServerError: 500,
  BadGatewayException: 502,
  ServiceUnavailableException: 503,
} as const;

export type ErrorType = keyof typeof ERROR_TYPES;

function make(type: ErrorType, message: string, details?: ErrorDetails, headers?: Record<string, string>): AppError {
  return new AppError(ERROR_TYPES[type], type, message, details, headers);
}

export const ERRORS = {
  badRequest: (message: string, details?: ErrorDetails) => make('BadRequestException', message, details),
  unauthenticated: (message = 'A valid API key is required: send it as "Authorization: Bearer <key>".') =>
    make('AuthenticationException', message),
  missingScope: (required: string, granted: readonly string[]) =>
    make('AuthorizationException', `This operation needs the scope "${required}", which the key does not have.`, {
      required_scope: [required],
      granted_scopes: [...granted],
    }),
  planRestricted: (feature: string, requiredPlan: string, currentPlan: string) =>
    make('PlanRestrictionException', `${feature} needs the ${requiredPlan} plan; this workspace is on the ${currentPlan} plan.`, {
      required_plan: [requiredPlan],
      current_plan: [currentPlan],
    }),
  forbidden: (message: string) => make('AuthorizationException', message),
  csrf: (message: string) => make('CsrfException', message),
  notFound: (model: string) => make('ModelNotFoundException', `${model} not found.`),
  routeNotFound: (method: string, url: string) => make('RouteNotFoundException', `No operation ${method} ${url}.`),
  conflict: (message: string, details?: ErrorDetails) => make('ConflictException', message, details),
  gone: (message: string) => make('GoneException', message),
  idempotencyInProgress: () =>
    make('IdempotencyInProgressException', 'A request with this Idempotency-Key is still being processed; retry after it finishes.', undefined, {
      'retry-after': '1',
    }),
  idempotencyKeyReused: () =>
    make(
      'IdempotencyKeyReusedException',
      'This Idempotency-Key was already used with a different request (method, path or body). Use a new key for a new request.',
    ),
  validation: (details: ErrorDetails, message = 'The given data was invalid.') => make('ValidationException', message, details),
  payloadTooLarge: (message: string) => make('PayloadTooLargeException', message),
  unsupportedMediaType: (message: string) => make('UnsupportedMediaTypeException', message),
  rateLimited: (retryAfterSeconds: number) =>
    make('RateLimitException', `Too many requests. Retry after ${retryAfterSeconds} seconds.`, undefined, {
      'retry-after': String(retryAfterSeconds),
    }),
  badGateway: (message: string) => make('BadGatewayException', message),
  unavailable: (message: string) => make('ServiceUnavailableException', message),
  internal: () => make('InternalServerError', 'Something went wrong on our side. The error was logged; retrying may help.'),
};

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
