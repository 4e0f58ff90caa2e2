import { ApiError } from "../../api/errors";
import { textProblem } from "../../fields";

/**
 * The effect key from a request's path, decoded exactly once from the raw (still percent-encoded)
 * path: /api/v1/effects/<encodeURIComponent(key)>[/<suffix>]. Reading the raw path, rather than a
 * router parameter, keeps keys with "/", "%", "?", "#", spaces and non-ASCII intact.
 */
export function effectKeyFromPath(request: Request, suffix?: string): string {
  const raw = new URL(request.url).pathname;
  const prefix = "/api/v1/effects/";
  let encoded = raw.startsWith(prefix) ? raw.slice(prefix.length) : "";
  if (suffix) {
    if (!encoded.endsWith(`/${suffix}`)) throw new ApiError("NOT_FOUND", "no API endpoint at this path");
    encoded = encoded.slice(0, -(suffix.length + 1));
  }
  if (encoded === "" || encoded.includes("/")) {
    throw new ApiError("NOT_FOUND", 'no API endpoint at this path: encode the key\'s "/" as %2F');
  }
  let key: string;
  try {
    key = decodeURIComponent(encoded);
  } catch {
    throw new ApiError("INVALID_INPUT", "invalid path: the key is not valid percent-encoded UTF-8");
  }
  if (key.length > 255) throw new ApiError("INVALID_INPUT", "invalid path: a key is at most 255 characters");
  const problem = textProblem(key);
  if (problem) throw new ApiError("INVALID_INPUT", `invalid path: the key ${problem}`, [{ path: "key", message: problem }]);
  return key;
}
