import type { z } from "zod";
import { ApiError } from "./errors";

/**
 * Parses a request's query string with a zod object schema. Repeated keys keep their last value.
 * Unknown keys are ignored (a deep link may carry UI-only state); invalid ones are a 400 naming each.
 */
export function parseSearchParams<S extends z.ZodType>(schema: S, input: URL | URLSearchParams | string): z.infer<S> {
  const params =
    input instanceof URLSearchParams
      ? input
      : input instanceof URL
        ? input.searchParams
        : new URL(input, "http://local").searchParams;
  const raw: Record<string, string> = {};
  for (const [key, value] of params) raw[key] = value;
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join(".") || "(query)", message: issue.message }));
  throw new ApiError("INVALID_INPUT", `invalid query: ${issues.map((i) => `${i.path} ${i.message}`).join("; ")}`, issues);
}
