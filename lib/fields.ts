import { z } from "zod";

/**
 * The refinements every query, path and body field goes through, whichever layer parses it (the
 * API's schemas, the pages' search params, the CLI's flags): one definition of "text PostgreSQL
 * can store", "a time PostgreSQL can compare" and "an id that fits its column", so a value the
 * database would choke on is a 400 naming the field, never a 500.
 */

// PostgreSQL text cannot hold NUL, and no tenant, key, job type or search holds a control character.
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
// With the u flag a surrogate pair is one code point, so this matches only a half of one.
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `value` is not text the console accepts, or undefined when it is. */
export function textProblem(value: string): string | undefined {
  if (CONTROL_CHARACTER.test(value)) return "must not contain control characters";
  // A lone UTF-16 surrogate (from "\ud800" in JSON) has no UTF-8 form: PostgreSQL refuses it.
  if (LONE_SURROGATE.test(value)) return "must be valid UTF-8";
  return undefined;
}

/** A string of at most `max` characters (at least `min`) with no control character and valid UTF-8. */
export function safeText(max: number, min = 0) {
  return z
    .string()
    .min(min)
    .max(max)
    .superRefine((value, ctx) => {
      const problem = textProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    });
}

/** The years a console time may name: PostgreSQL's timestamptz holds more, but nothing here is older than 1970. */
const MIN_YEAR = 1970;
const MAX_YEAR = 9999;

// A date, or a date and time with seconds optional, fractions optional and an offset required
// (Z or ±hh:mm): an instant, never a wall-clock time that depends on the server's zone.
const ISO_TIME = /^(\d{4})-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/;

/** Why `value` is not an ISO 8601 time the console accepts, or undefined when it is. */
function isoTimeProblem(value: string): string | undefined {
  const match = ISO_TIME.exec(value);
  if (!match || Number.isNaN(Date.parse(value))) return "must be an ISO 8601 time like 2026-12-01T00:00:00Z";
  const year = Number(match[1]);
  if (year < MIN_YEAR || year > MAX_YEAR) return `must be a time between ${MIN_YEAR} and ${MAX_YEAR}`;
  return undefined;
}

/**
 * An ISO 8601 time between 1970 and 9999, kept as the string that was sent.
 *
 * Every problem aborts: zod runs an object's own refinements (from before to, a window's length)
 * after a field's non-aborting issue, with the field still the string that was sent, so a
 * refinement calling `from.getTime()` threw and a bad time was a 500. Aborting here keeps every
 * object refinement over times from seeing anything but a valid one.
 */
export const isoTime = z
  .string({ error: "must be an ISO 8601 time like 2026-12-01T00:00:00Z" })
  .max(40, { abort: true })
  .superRefine((value, ctx) => {
    const problem = isoTimeProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem, continue: false });
  });

/** The same time as a Date. */
export const isoInstant = isoTime.transform((value) => new Date(value));

/** The largest value of a PostgreSQL bigint (an identity column, a sequence). */
const MAX_BIGINT = 9_223_372_036_854_775_807n;

/** A positive bigint id in its decimal form, as the API hands it out (a cursor): 1 … 2^63-1. */
export const bigintId = z
  .string()
  .max(19)
  .refine((value) => /^[1-9]\d*$/.test(value) && BigInt(value) <= MAX_BIGINT, "must be an id this API returned");
