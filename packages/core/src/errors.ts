import type { ErrorBody, ErrorDetail } from "./schemas.js";

/** Every error code the service answers with, and its HTTP status. */
export const ERROR_STATUS = {
  invalid_parameter: 400,
  invalid_body: 400,
  unauthorized: 401,
  forbidden: 403,
  insufficient_scope: 403,
  address_not_allowed: 403,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_key_in_use: 409,
  key_revoked: 409,
  roll_in_progress: 409,
  gone: 410,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  temporarily_banned: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * The one error type of the service: thrown anywhere in the pipeline, turned into the Error
 * body by `toErrorResponse`.
 * @example throw new ApiError("not_found", "Pet 42 was not found")
 */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, such as `Allow` on a 405. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = ERROR_STATUS[code];
  }
}

/**
 * Thrown by adapters when storage is busy, locked or unreachable: the request gets a 503
 * with `Retry-After` instead of a 500, and may be retried safely.
 */
export class StorageUnavailableError extends Error {
  constructor(message = "Storage is unavailable", options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StorageUnavailableError";
  }
}

/**
 * Thrown when the client closed the connection before its request body arrived in full: a
 * client abort, not a server failure. `onError` is not called and nothing is written; the
 * answer (a 400) rarely reaches anyone.
 */
export class RequestAbortedError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("The client closed the connection before sending the whole request body", options);
    this.name = "RequestAbortedError";
  }
}

/** Seconds a client waits before retrying after a 503. */
export const UNAVAILABLE_RETRY_SECONDS = 1;

/** Turns anything thrown into an `ApiError`; unknown errors become `internal_error`. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof RequestAbortedError)
    return new ApiError("invalid_body", "The request body ended before it arrived in full");
  if (error instanceof StorageUnavailableError) {
    return new ApiError("service_unavailable", "Storage is temporarily unavailable; retry later", undefined, {
      "Retry-After": String(UNAVAILABLE_RETRY_SECONDS),
    });
  }
  return new ApiError("internal_error", "The server failed to handle the request");
}

/** The Error body of an `ApiError`, as a JSON response, with `headers` added. */
export function toErrorResponse(error: ApiError, headers?: Record<string, string>): Response {
  const body: ErrorBody = { code: error.code, message: error.message, status: error.status };
  if (error.details) body.details = error.details;
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { ...headers, ...error.headers, "Content-Type": "application/json" },
  });
}

/**
 * An error and its causes, outermost first, five deep at most: drivers wrap what really
 * failed (a socket's code, a certificate refused) in errors of their own, so a question about
 * why asks each of them.
 * @example const code = errorChain(error).find((cause) => "code" in cause);
 */
export function errorChain(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let cause = error; cause instanceof Error && chain.length < 5; cause = cause.cause) chain.push(cause);
  return chain;
}
