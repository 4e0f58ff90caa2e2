/**
 * What an effect's outcome becomes when it is stored (jsonb), and the markers for outcomes that
 * cannot be. The rule: a JSON value round-trips (strings, finite numbers, booleans, null, arrays,
 * plain objects; a Date becomes its ISO string through toJSON; `undefined` becomes null; an object
 * property whose value is undefined is dropped, as JSON.stringify does). jsonb does not keep object
 * key order, so a duplicate's outcome has the same keys and values, not necessarily the same order.
 */

/** What the step returned, ready to store: JSON text, or the marker for an outcome we cannot keep. */
export type EncodedOutcome = { ok: true; json: string; bytes: number } | { ok: false; marker: string; reason: string };

const TOO_LARGE_MARKER = "outcome_too_large";
const NOT_STORABLE_MARKER = "outcome_not_storable";

// jsonb refuses \u0000 in strings (22P05) and lone surrogates; JSON.stringify writes both as escapes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the NUL character is the point
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// What JSON.stringify cannot write (it throws) or jsonb cannot store. Everything else follows JSON's
// own rules on every delivery alike (a function property is dropped, NaN becomes null), because the
// first caller gets the outcome back through JSON too.
function unstorable(value: unknown): string | null {
  if (typeof value === "bigint") return "a BigInt";
  if (typeof value !== "string") return null;
  if (NUL.test(value)) return "a string containing \\u0000";
  if (LONE_SURROGATE.test(value)) return "a string containing a lone UTF-16 surrogate";
  return null;
}

/**
 * Encodes a step's return value, or says why it cannot be stored (without throwing: a cycle, a
 * BigInt, a throwing toJSON all become a reason). Over `maxBytes` of JSON is the too-large marker.
 */
export function encodeOutcome(value: unknown, maxBytes: number): EncodedOutcome {
  let reason: string | null = null;
  let json: string | undefined;
  try {
    json = JSON.stringify(value === undefined ? null : value, function (key, v) {
      if (reason !== null) return undefined;
      // Property keys are strings too: check them once, where they appear.
      if (key !== "" && !Array.isArray(this)) {
        const bad = unstorable(key);
        if (bad !== null) reason = `an object key that is ${bad}`;
      }
      const bad = unstorable(v);
      if (bad !== null) reason = `${bad}${key === "" ? "" : ` at ${JSON.stringify(key)}`}`;
      return reason !== null ? undefined : v;
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    reason ??= /circular/i.test(message) ? "a cycle" : `JSON.stringify failed: ${message.split("\n")[0]}`;
  }
  if (reason !== null || json === undefined) {
    const why = reason ?? "no JSON value";
    return { ok: false, marker: `${NOT_STORABLE_MARKER}: ${why}`.slice(0, 2000), reason: why };
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes) return { ok: false, marker: `${TOO_LARGE_MARKER}: ${bytes} bytes`, reason: `${bytes} bytes` };
  return { ok: true, json, bytes };
}

/** Reads a stored marker back: what a duplicate of an effect without a stored outcome is told. */
export function parseMarker(
  error: string | null,
): { kind: "too_large"; bytes: number } | { kind: "not_storable"; reason: string } | null {
  if (!error) return null;
  const tooLarge = /^outcome_too_large: (\d+)/.exec(error);
  if (tooLarge) return { kind: "too_large", bytes: Number(tooLarge[1]) };
  if (error.startsWith(`${NOT_STORABLE_MARKER}: `))
    return { kind: "not_storable", reason: error.slice(NOT_STORABLE_MARKER.length + 2) };
  return null;
}
