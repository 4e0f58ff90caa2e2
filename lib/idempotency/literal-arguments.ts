/**
 * A prepared statement's values as SQL literals, for `EXECUTE name(…)`: how a transaction the library
 * owns sends its BEGIN and its first statement in one simple-query message, still running the
 * statement's plan prepared on that connection (db.ts, inNewTransaction; issue 42,
 * docs/benchmarks.md 2026-12-07).
 *
 * Each value is written as the text pg would have sent for it as a parameter, quoted by the
 * driver's own escapeLiteral (quotes and backslashes doubled, an E'' string when there is a
 * backslash, right whatever standard_conforming_strings is), so the server reads it through the same
 * type input function. Only NULL, booleans, finite numbers and ASCII strings are written: for
 * anything else (arrays, dates, objects, other text) this answers null and the caller sends BEGIN
 * alone.
 */

// Strings are written only when every character is printable ASCII, tab or newline. A quote
// doubled after a byte that a client encoding such as SJIS or BIG5 reads as the first half of a
// two-byte character would lose its first half (pg sends UTF-8 whatever client_encoding the server
// was told); with ASCII alone there is no such byte, whatever the encoding. Any other string keeps
// its own BEGIN and a bound parameter.
const PRINTABLE_ASCII = /^[\t\n\x20-\x7e]*$/;

/** The driver's quoting of a string as an SQL literal (pg's Client#escapeLiteral). */
export type QuoteLiteral = (value: string) => string;

function literal(value: unknown, quote: QuoteLiteral): string | null {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "boolean") return value ? "'true'" : "'false'";
  if (typeof value === "number") return Number.isFinite(value) ? `'${value}'` : null;
  if (typeof value === "string") return PRINTABLE_ASCII.test(value) ? quote(value) : null;
  return null;
}

/** `(v1, v2, …)` for `EXECUTE name(v1, v2, …)` (nothing for no values), or null when a value is not one this module writes. */
export function literalArguments(values: readonly unknown[], quote: QuoteLiteral): string | null {
  if (values.length === 0) return "";
  const written: string[] = [];
  for (const value of values) {
    const text = literal(value, quote);
    if (text === null) return null;
    written.push(text);
  }
  return `(${written.join(", ")})`;
}
