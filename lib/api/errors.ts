import { ConfigError } from "../config";
import { CodedError, ConsoleError, type ConsoleErrorCode, DomainError, type DomainErrorCode } from "../console/errors";
import { logEvent } from "./log-safe";

function errorText(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Every error code the HTTP API answers with, and its status. One table, one place. */
export const ERROR_STATUS = {
  INVALID_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  CONFIG_INVALID: 500,
  DATABASE_UNAVAILABLE: 503,
  DATABASE_NOT_CONFIGURED: 503,
  QUERY_TIMEOUT: 504,
  METRICS_SOURCE_FAILED: 502,
  NOT_ON_THIS_EFFECTS_STORE: 501,
  RETENTION_INVALID: 400,
  RETENTION_REFUSED: 409,
  RETENTION_STALE: 409,
} as const satisfies Record<
  | ConsoleErrorCode
  | ConfigError["code"]
  | DomainErrorCode
  | "INVALID_INPUT"
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "RATE_LIMITED"
  | "INTERNAL",
  number
>;

type ApiErrorCode = keyof typeof ERROR_STATUS;

interface ApiErrorBody {
  error: { code: ApiErrorCode; message: string; issues?: { path: string; message: string }[] };
}

/** A refusal as the HTTP API answers it: its code's status comes from ERROR_STATUS. */
export class ApiError extends CodedError<ApiErrorCode> {
  override name = "ApiError";
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** Any thrown value as an ApiError: known codes keep their message, the rest become a bare 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ConsoleError) return new ApiError(error.code, error.message);
  // A rule's refusal (a scope, a retention change): its code and the fields at fault, as they are.
  if (error instanceof DomainError) return new ApiError(error.code, error.message, error.issues);
  // Library input errors (a bad cursor, a bad token field) carry code INVALID_INPUT and a safe message.
  if (error instanceof Error && (error as { code?: unknown }).code === "INVALID_INPUT")
    return new ApiError("INVALID_INPUT", error.message);
  // A malformed environment variable: the message names the variable (never a password), so it is shown.
  if (error instanceof ConfigError) return new ApiError(error.code, error.message);
  return new ApiError("INTERNAL", "internal error: see the console server's log");
}

/** The JSON response for an error: a code, a message and never a stack trace. */
export function errorResponse(error: unknown): Response {
  const apiError = toApiError(error);
  // One JSON line: a key or path inside an error message cannot forge a log entry.
  if (apiError.code === "INTERNAL") logEvent("error", "unhandled error in a route handler", { err: errorText(error) });
  const body: ApiErrorBody = {
    error: { code: apiError.code, message: apiError.message, ...(apiError.issues ? { issues: apiError.issues } : {}) },
  };
  return Response.json(body, {
    status: apiError.status,
    headers: { "cache-control": "no-store", ...(apiError.status === 503 ? { "retry-after": "5" } : {}) },
  });
}

/** Wraps a route handler so whatever it throws becomes errorResponse(). */
export function handleErrors<A extends unknown[]>(handler: (...args: A) => Promise<Response>): (...args: A) => Promise<Response> {
  return async (...args: A) => {
    try {
      return await handler(...args);
    } catch (error) {
      return errorResponse(error);
    }
  };
}

/** A successful JSON answer; console data is live, so never cached. */
export function jsonResponse(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return Response.json(body, { status: init.status ?? 200, headers: { "cache-control": "no-store", ...init.headers } });
}

/**
 * Handlers for the methods a route does not serve: JSON 405 with Allow, instead of Next's empty one.
 *   export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
 */
export function otherMethods(allowed: string[]): Record<"GET" | "POST" | "PUT" | "PATCH" | "DELETE", () => Promise<Response>> {
  const allow = [...allowed, ...(allowed.includes("GET") ? ["HEAD"] : [])].join(", ");
  const handler = async () => {
    const response = errorResponse(new ApiError("METHOD_NOT_ALLOWED", `method not allowed here; allowed: ${allow}`));
    response.headers.set("allow", allow);
    return response;
  };
  return { GET: handler, POST: handler, PUT: handler, PATCH: handler, DELETE: handler };
}
