import { escapeLiteral } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { literalArguments } from "../literal-arguments";

/**
 * The literals a library-owned transaction's first statement is executed with (db.ts: BEGIN and
 * EXECUTE in one message). Refusal is the safe answer: the caller then sends BEGIN on its own.
 */
describe("literalArguments", () => {
  const write = (values: unknown[]) => literalArguments(values, escapeLiteral);

  it("writes each value as the text pg would send for it, quoted", () => {
    expect(write(["a", null, undefined, true, false, -5, 2.5, "it's", "back\\slash"])).toBe(
      "('a', NULL, NULL, 'true', 'false', '-5', '2.5', 'it''s',  E'back\\\\slash')",
    );
    expect(write([])).toBe("");
  });

  it("refuses what it does not write: arrays, dates, objects, bigints, NaN, infinities, NUL, other control characters, non-ASCII", () => {
    for (const value of [
      ["a"],
      new Date(0),
      { a: 1 },
      10n,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      "a\0b",
      "a\rb",
      "ünï",
      "\u00c1\\'",
    ]) {
      expect(write(["ok", value])).toBeNull();
    }
  });
});

describe("literal arguments on PostgreSQL", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolSize: 1 });
  });
  afterAll(async () => {
    await db?.drop();
  });

  // Characters that matter to a literal's quoting, beside ordinary and astral ones.
  const ALPHABET = ["'", "\\", "$", "1", '"', "-", "/", "*", ";", ")", "E", "\n", "\t", " ", "a", "~", "''", "\\'"];
  function randomString(seed: number): string {
    let x = seed;
    let s = "";
    for (let i = 0; i < seed % 24; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      s += ALPHABET[x % ALPHABET.length];
    }
    return s;
  }

  it.each(["on", "off"])(
    "EXECUTE with them reads back every value exactly, with standard_conforming_strings %s",
    async (setting) => {
      const client = await db.pool.connect();
      try {
        await client.query(`SET standard_conforming_strings = ${setting}`);
        await client.query("SET escape_string_warning = off");
        await client.query("PREPARE probe AS SELECT $1::text AS a, $2::int AS n, $3::boolean AS b, $4::text AS c");
        for (let seed = 0; seed < 1500; seed++) {
          const values = [randomString(seed), seed % 7 === 0 ? null : seed - 700, seed % 2 === 0, randomString(seed * 31 + 7)];
          const args = literalArguments(values, (v) => client.escapeLiteral(v));
          if (args === null) throw new Error(`refused seed ${seed}`);
          const { rows } = await client.query(`EXECUTE probe${args}`);
          expect(rows[0], args).toEqual({ a: values[0], n: values[1], b: values[2], c: values[3] });
        }
      } finally {
        await client.query("DEALLOCATE ALL");
        client.release();
      }
    },
  );
});
