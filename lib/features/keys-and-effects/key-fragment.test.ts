import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { keyContainsFragment } from "./key-fragment";

/**
 * The fragment test's ASCII shortcut must match exactly the keys lower() matches: on keys of every
 * kind (ASCII in both cases, Latin letters with accents, the Kelvin sign and the capital I with a dot,
 * whose lowering leaves or enters ASCII, Greek, emoji) and fragments lowered as the search lowers
 * them (String.prototype.toLowerCase), each pair is asked of both predicates in one statement.
 */
const KEYS = [
  "capture:ord-7",
  "Capture:ORD-7-Refund",
  "receipt:ÉTÉ-2026",
  "receipt:été-2026",
  "kelvin:\u212A-42", // KELVIN SIGN, lowered to an ASCII k
  "dot:\u0130stanbul", // LATIN CAPITAL LETTER I WITH DOT ABOVE
  "greek:ΣΟΦΙΑ-1",
  "emoji:😀-order-9",
  "mixed:ABC-é-XYZ",
  "percent:100%_done",
];
const FRAGMENTS = [
  "ord-7",
  "ORD-7",
  "refund",
  "été",
  "ÉTÉ",
  "k-42",
  "\u212A",
  "istanbul",
  "i",
  "σοφια",
  "😀-ORDER",
  "c-é-x",
  "%_",
  "_",
  "%",
];

describe("keyContainsFragment", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolSize: 1 });
  });
  afterAll(async () => {
    await db.drop();
  });

  it("matches the same keys as strpos(lower(key), fragment) on every pair", async () => {
    const pairs = KEYS.flatMap((key) => FRAGMENTS.map((fragment) => ({ key, fragment: fragment.toLowerCase() })));
    const { rows } = await db.pool.query<{ key: string; fragment: string; fast: boolean; full: boolean }>(
      `SELECT key, fragment, ${keyContainsFragment("fragment")} AS fast, strpos(lower(key), fragment) > 0 AS full
         FROM unnest($1::text[], $2::text[]) AS p(key, fragment)`,
      [pairs.map((p) => p.key), pairs.map((p) => p.fragment)],
    );
    expect(rows).toHaveLength(pairs.length);
    expect(rows.filter((r) => r.fast !== r.full)).toEqual([]);
    // The pairs are not all misses: the cases that only the full lowering finds are among them.
    const matched = rows.filter((r) => r.full).map((r) => `${r.key} ∋ ${r.fragment}`);
    expect(matched).toEqual(
      expect.arrayContaining([
        "Capture:ORD-7-Refund ∋ ord-7",
        "receipt:ÉTÉ-2026 ∋ été",
        "kelvin:\u212A-42 ∋ k-42",
        "greek:ΣΟΦΙΑ-1 ∋ σοφια",
        "emoji:😀-order-9 ∋ 😀-order",
        "mixed:ABC-é-XYZ ∋ c-é-x",
        "percent:100%_done ∋ %_",
      ]),
    );
  });
});
