import type { z } from "zod";
import { ApiError } from "./errors";

/**
 * Parses a request's query string with a zod object schema. Repeated keys keep their last value.
 * Unknown keys are ignored (a deep link may carry UI-only state); invalid ones are a 400 naming each.
 */
export function parseSearchParams<S extends z.ZodType>(schema: S, input: URL | URLSearchParams | string): z.infer<S> {
  const url = input instanceof URLSearchParams ? undefined : input instanceof URL ? input : new URL(input, "http://local");
  if (url) assertWellEncoded(url.search);
  const params = url ? url.searchParams : (input as URLSearchParams);
  const raw: Record<string, string> = {};
  for (const [key, value] of params) raw[key] = value;
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw invalidInput("query", parsed.error);
}

/**
 * URLSearchParams decodes a malformed escape (%ZZ, a lone %C3) into U+FFFD or leaves it as typed,
 * so a value that is not UTF-8 would reach a query as some other text: it is a 400 naming the field.
 */
function assertWellEncoded(search: string): void {
  for (const pair of search.replace(/^\?/, "").split("&")) {
    if (!pair.includes("%")) continue;
    const [rawName = "", ...rest] = pair.split("=");
    const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, " "));
    let name = "(query)";
    try {
      name = decode(rawName);
      decode(rest.join("="));
    } catch {
      const message = "must be valid percent-encoded UTF-8";
      throw new ApiError("INVALID_INPUT", `invalid query: ${name} ${message}`, [{ path: name, message }]);
    }
  }
}

/** A zod failure as the API's 400, naming each field ("(query)" / "(body)" for the whole). */
function invalidInput(where: "query" | "body", error: z.ZodError): ApiError {
  const issues = error.issues.map((issue) => ({ path: issue.path.join(".") || `(${where})`, message: issue.message }));
  return new ApiError("INVALID_INPUT", `invalid ${where}: ${issues.map((i) => `${i.path} ${i.message}`).join("; ")}`, issues);
}

/** What an admin request body may weigh: the largest the API takes (a settings change, a sign-in) is well under 1 KiB. */
export const MAX_BODY_BYTES = 16 * 1024;

/**
 * A request body as text, refused with 413 past `maxBytes` (by Content-Length when sent, else while
 * reading), so a flood of bytes is never buffered whole.
 */
export async function readBodyText(request: Request, maxBytes = MAX_BODY_BYTES): Promise<string> {
  const tooLarge = () => new ApiError("PAYLOAD_TOO_LARGE", `the request body is larger than ${maxBytes / 1024} KiB`);
  const declared = Number(request.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A JSON request body checked by a zod schema: 413 when too large, 400 naming what is wrong otherwise. */
export async function parseJsonBody<S extends z.ZodType>(schema: S, request: Request): Promise<z.infer<S>> {
  const text = await readBodyText(request);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ApiError(
      "INVALID_INPUT",
      text.trim() === "" ? "invalid body: a JSON object is required" : "invalid body: not valid JSON",
    );
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw invalidInput("body", parsed.error);
}

/** One path segment checked by a zod schema: a 400 naming the parameter when it does not fit. */
export function parsePathParam<S extends z.ZodType>(schema: S, name: string, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues.map((issue) => issue.message).join("; ");
  throw new ApiError("INVALID_INPUT", `invalid path: ${name} ${message}`, [{ path: name, message }]);
}
