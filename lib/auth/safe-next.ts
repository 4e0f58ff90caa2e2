/**
 * Where sign-in may send a reader back to: a path of this console, nothing else. A browser turns
 * `//evil.example`, `/\evil.example` (a backslash counts as a slash) and a path with a tab or
 * newline stripped out of it into another site, and a server that decodes once more turns
 * `/%5Cevil.example` or `/%252F%252Fevil.example` into those; so the value is checked as given and
 * after each round of percent-decoding, and anything doubtful is refused, not repaired.
 */
export const DEFAULT_AFTER_SIGN_IN = "/overview";

const MAX_LENGTH = 2000;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const UNSAFE = /[\\\u0000-\u001f\u007f]/;
const PROBE_ORIGIN = "http://console.invalid";

function looksLikePath(value: string): boolean {
  return value.startsWith("/") && !value.startsWith("//") && !UNSAFE.test(value);
}

/** A path a browser resolves to itself on this origin, unchanged (nothing it would strip or reinterpret). */
function isPlainPath(value: string): boolean {
  if (!looksLikePath(value)) return false;
  try {
    const resolved = new URL(value, PROBE_ORIGIN);
    return resolved.origin === PROBE_ORIGIN && `${resolved.pathname}${resolved.search}${resolved.hash}` === value;
  } catch {
    return false;
  }
}

/** `value` when it is a same-origin relative path (not back to /login); else null. */
export function safeNextPath(value: unknown): string | null {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_LENGTH) return null;
  if (!isPlainPath(value)) return null;
  let current = value;
  for (let round = 0; round < 4; round++) {
    if (!looksLikePath(current)) return null;
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return null;
    }
    if (decoded === current) break;
    current = decoded;
    // Still encoded after four rounds: nobody sends that by accident.
    if (round === 3) return null;
  }
  if (value === "/login" || value.startsWith("/login?") || value.startsWith("/login/") || value.startsWith("/login#"))
    return null;
  return value;
}

/** safeNextPath, or the Overview. */
export function nextPathOrDefault(value: unknown): string {
  return safeNextPath(value) ?? DEFAULT_AFTER_SIGN_IN;
}
