/** A failed API call, carrying the server's error code and message (lib/api/errors.ts). */
export class ApiClientError extends Error {
  readonly status: number;
  readonly code: string;
  /** The fields the server named (a refusal's issues: the setting in the way and the value it needs). */
  readonly issues: { path: string; message: string }[];
  constructor(status: number, code: string, message: string, issues: { path: string; message: string }[] = []) {
    super(message);
    this.name = "ApiClientError";
    this.status = status;
    this.code = code;
    this.issues = issues;
  }
}

/** GETs JSON from our own API; a non-2xx answer or a network failure throws ApiClientError. */
export function fetchJson<T>(url: string, signal?: AbortSignal): Promise<T> {
  return requestJson<T>(url, { signal, headers: { accept: "application/json" }, cache: "no-store" });
}

/**
 * Writes to our own API: POST (or `method`) with `body` as JSON when given. Fails as fetchJson
 * does, with the server's error code kept in the ApiClientError, so every write in the UI reports
 * refusals the same way.
 */
export function postJson<T>(
  url: string,
  body?: unknown,
  options: { method?: "POST" | "PUT" | "PATCH" | "DELETE"; signal?: AbortSignal } = {},
): Promise<T> {
  return requestJson<T>(url, {
    method: options.method ?? "POST",
    signal: options.signal,
    cache: "no-store",
    headers:
      body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function requestJson<T>(url: string, init: RequestInit): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if ((error as Error)?.name === "AbortError") throw error;
    throw new ApiClientError(0, "NETWORK", "the console server did not answer (is it running?)");
  }
  const body = (await response.json().catch(() => null)) as {
    error?: { code?: string; message?: string; issues?: { path: string; message: string }[] };
  } | null;
  if (!response.ok) {
    throw new ApiClientError(
      response.status,
      body?.error?.code ?? `HTTP_${response.status}`,
      body?.error?.message ?? `the server answered ${response.status} ${response.statusText}`,
      Array.isArray(body?.error?.issues) ? body.error.issues : [],
    );
  }
  return body as T;
}

/** Retry transient failures once, quickly; never retry a request the server called invalid. */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (error instanceof ApiClientError && error.status >= 400 && error.status < 500) return false;
  return failureCount < 1;
}
