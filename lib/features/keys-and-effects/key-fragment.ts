/**
 * "The key contains this fragment, whatever the case": the Keys search and a bulk release's key
 * filter, on PostgreSQL. One definition, so the two cannot disagree on which keys match.
 *
 * A search reads every key of the tenant's range and tests each, so the test is the search's cost:
 * lower() in a UTF-8 database lowers through the locale's wide characters, ~0.2 µs a key, a fifth of
 * a 10,000-key search (docs/benchmarks.md, 2026-12-06). A key whose bytes are all ASCII (its byte
 * and character lengths agree, in UTF-8) is lowered by the "C" collation instead: A–Z to a–z, the
 * same as lower() gives such a key in every locale but a Turkish one, where lower('I') is a dotless
 * ı that no lowered fragment written with an ASCII i ever matched. Any other key, which may hold a
 * letter whose lowering leaves ASCII (the Kelvin sign's k), takes the full lower(). The encoding is
 * read once per statement (an InitPlan): in a single-byte encoding the two lengths always agree,
 * so there every key takes lower().
 *
 * `fragment` is a SQL expression already lowered (a bound parameter lowered by the caller, or
 * lower($n)), tested against the column `key`; strpos, not LIKE, so "%" and "_" are literal.
 */
export function keyContainsFragment(fragment: string): string {
  return `strpos(CASE WHEN octet_length(key) = char_length(key)
                       AND (SELECT current_setting('server_encoding') = 'UTF8')
                      THEN lower(key COLLATE "C") ELSE lower(key) END, ${fragment}) > 0`;
}
