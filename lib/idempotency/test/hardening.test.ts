import { createHash } from "node:crypto";
import pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { testPrismaClient } from "../../../test/prisma";
import type { OwnedClaim } from "../claim";
import { runComplete } from "../complete-sql";
import { sqlFor } from "../db";
import {
  ClaimSettledError,
  EffectKeyReuseError,
  InvalidEffectInputError,
  InvalidEffectKeyError,
  InvalidEffectsOptionsError,
  NotInTransactionError,
  OutcomeNotStorableError,
  RetentionConfigError,
} from "../errors";
import { createEffects, EffectsError } from "../index";
import { canonicalJson, MAX_KEY_LENGTH, requestHash } from "../keys";
import { captureLogger, PROVIDER_DDL, silentLogger, testEffects } from "./helpers";

/** Hardening of the claim path: each test fails with its fix removed. */

let db: TestDatabase;
let n = 0;
const uniq = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 7)}`;

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 12 });
  await db.pool.query(PROVIDER_DDL);
});
afterAll(async () => {
  await db?.drop();
});

async function rows(key: string) {
  const { rows } = await db.pool.query<{ status: string; outcome: unknown; error: string | null; attempt: number }>(
    "SELECT status, outcome, error, attempt FROM effects WHERE key = $1",
    [key],
  );
  return rows;
}

describe("item 5: a completed effect is always a duplicate", () => {
  it("is found without waiting while a caller's transaction holds the claim's advisory lock", async () => {
    const effects = testEffects(db.pool);
    const tenant = "acme";
    const key = uniq("capture:order");
    await effects.once({ tenant, key, jobType: "j" }, () => ({ charge: "ch_1" }));
    const client = await db.pool.connect();
    try {
      await client.query("BEGIN");
      // The case from the issue: a transactional claim that got `duplicate` keeps the lock until commit.
      const inTx = await effects.claim({ tenant, key, jobType: "j", policy: "transactional", tx: client });
      expect(inTx.kind).toBe("duplicate");
      // And any other holder of the same lock, to be sure the lock is held while we redeliver.
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(1) || $2, 0))", [tenant, key]);
      let ran = false;
      const again = await effects.once({ tenant, key, jobType: "j", wait: "50ms" }, () => {
        ran = true;
        return { charge: "ch_2" };
      });
      expect(ran).toBe(false);
      expect(again).toMatchObject({ result: "duplicate", outcome: { charge: "ch_1" } });
      const viaClaim = await effects.claim({ tenant, key, jobType: "j", wait: 0 });
      expect(viaClaim).toMatchObject({ kind: "duplicate", outcome: { charge: "ch_1" } });
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  });
});

describe("item 4: an outcome that cannot be stored", () => {
  const cyclic = () => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    return o;
  };
  const cases: [string, () => unknown, RegExp][] = [
    ["BigInt", () => ({ cents: 10n }), /BigInt/],
    ["cycle", cyclic, /cycle/],
    ["\\u0000", () => ({ note: "a\u0000b" }), /u0000/],
    ["lone surrogate", () => ["\ud800"], /surrogate/],
  ];
  for (const [name, value, reason] of cases) {
    it(`(${name}) completes the effect with a marker: typed error first, typed error for duplicates, never re-run`, async () => {
      const effects = testEffects(db.pool, { lease: "100ms" });
      const key = uniq("capture:order");
      let runs = 0;
      const step = () => {
        runs++;
        return value();
      };
      const first = await effects.once({ tenant: "acme", key, jobType: "j" }, step).catch((e) => e);
      expect(first).toBeInstanceOf(OutcomeNotStorableError);
      expect(first).toMatchObject({ code: "OUTCOME_NOT_STORABLE", disposition: "dead-letter", duplicate: false });
      expect(first.reason).toMatch(reason);
      const [row] = await rows(key);
      expect(row).toMatchObject({ status: "completed", outcome: null });
      expect(row?.error).toMatch(/^outcome_not_storable: /);
      // Long after the 100 ms lease: still never re-run.
      await db.pool.query("UPDATE effects SET lease_until = now() - interval '1 hour' WHERE key = $1", [key]);
      const dup = await effects.once({ tenant: "acme", key, jobType: "j" }, step).catch((e) => e);
      expect(dup).toBeInstanceOf(OutcomeNotStorableError);
      expect(dup.duplicate).toBe(true);
      const claimed = await effects.claim({ tenant: "acme", key, jobType: "j" });
      expect(claimed).toMatchObject({ kind: "duplicate", outcome: null, missing: { kind: "not_storable" } });
      expect(runs).toBe(1);
    });
  }

  it("in a transactional step: the writes and the marker commit together, the step never runs again", async () => {
    const effects = testEffects(db.pool);
    const id = uniq("order");
    await db.pool.query("INSERT INTO orders (id) VALUES ($1)", [id]);
    const key = `mark-paid:${id}`;
    const deliver = () =>
      effects.job({ tenant: "acme", jobType: "j" }, (job) =>
        job.transaction(key, async (tx) => {
          await tx.query("UPDATE orders SET paid_count = paid_count + 1 WHERE id = $1", [id]);
          return { id: 1n };
        }),
      );
    expect(await deliver().catch((e) => e)).toBeInstanceOf(OutcomeNotStorableError);
    expect(await deliver().catch((e) => e)).toMatchObject({ code: "OUTCOME_NOT_STORABLE", duplicate: true });
    const { rows: o } = await db.pool.query("SELECT paid_count FROM orders WHERE id = $1", [id]);
    expect(o[0].paid_count).toBe(1);
  });

  it("claim.complete with an unstorable outcome records the marker too", async () => {
    const effects = testEffects(db.pool);
    const key = uniq("capture:order");
    const owned = await effects.claim({ tenant: "acme", key, jobType: "j" });
    if (owned.kind !== "owned") throw new Error("expected owned");
    await expect(owned.claim.complete({ n: 1n })).rejects.toBeInstanceOf(OutcomeNotStorableError);
    expect((await rows(key))[0]).toMatchObject({ status: "completed" });
  });
});

describe("item 6: a transactional step's tx must be in a transaction block", () => {
  it("refuses a client without BEGIN, a failed transaction, a pool and a PrismaClient, before anything is claimed", async () => {
    const effects = testEffects(db.pool);
    const client = await db.pool.connect();
    const prismaPool = new pg.Pool({ connectionString: db.url, max: 2 });
    prismaPool.on("error", () => {});
    const prisma = testPrismaClient(prismaPool);
    try {
      let runs = 0;
      const attempt = (tx: unknown) => {
        const key = uniq("mark-paid:o");
        return effects
          .once({ tenant: "acme", key, jobType: "j", policy: "transactional", tx: tx as pg.PoolClient }, () => {
            runs++;
          })
          .then(
            () => ({ key, error: null }),
            (error: unknown) => ({ key, error }),
          );
      };
      for (const tx of [client, db.pool, prisma]) {
        const { key, error } = await attempt(tx);
        expect(error).toBeInstanceOf(NotInTransactionError);
        expect(error).toMatchObject({ code: "NOT_IN_TRANSACTION", field: "tx", disposition: "dead-letter" });
        expect(await rows(key)).toEqual([]);
      }
      await client.query("BEGIN");
      await client.query("SELECT 1/0").catch(() => {});
      // pg settles a failed query on its ErrorResponse, before the ReadyForQuery that marks the
      // transaction failed; a second statement is answered only after that one is read.
      await client.query("SELECT 1").catch(() => {});
      const failed = await attempt(client);
      expect(failed.error).toBeInstanceOf(NotInTransactionError);
      await client.query("ROLLBACK");
      // Low-level claims check too.
      const viaClaim = await effects.claim({ tenant: "acme", key: uniq("a:b"), jobType: "j", tx: client }).catch((e) => e);
      expect(viaClaim).toBeInstanceOf(NotInTransactionError);
      expect(runs).toBe(0);
      // And the right handle works: a BEGIN sent but not awaited is seen too.
      const begun = client.query("BEGIN");
      const ok = await attempt(client);
      await begun;
      expect(ok.error).toBeNull();
      await client.query("COMMIT");
      expect(runs).toBe(1);
      expect(await prisma.$transaction((tx) => attempt(tx).then((r) => r.error))).toBeNull();
    } finally {
      await client.query("ROLLBACK").catch(() => {});
      client.release();
      await prisma.$disconnect();
      await prismaPool.end();
    }
  });
});

describe("item 7: a stored outcome is never replaced", () => {
  it("refuses a second complete() and keeps the first outcome, in SQL as well", async () => {
    const effects = testEffects(db.pool);
    const key = uniq("capture:order");
    const owned = await effects.claim({ tenant: "acme", key, jobType: "j" });
    if (owned.kind !== "owned") throw new Error("expected owned");
    await owned.claim.complete({ charge: "first" });
    await expect(owned.claim.complete({ charge: "second" })).rejects.toBeInstanceOf(ClaimSettledError);
    await expect(owned.claim.fail(new Error("late"))).rejects.toBeInstanceOf(ClaimSettledError);
    // A completion re-sent at the SQL level (a retried statement) is accepted but changes nothing.
    expect(
      await runComplete(sqlFor(db.pool, false), (owned.claim as OwnedClaim).ref, JSON.stringify({ charge: "third" }), "x"),
    ).toBe(true);
    expect((await rows(key))[0]).toMatchObject({ status: "completed", outcome: { charge: "first" }, error: null });
  });
});

describe("item 8: per-call lease and wait are validated like createEffects'", () => {
  it("refuses 0s, 999999d and 30d leases and a 30d wait before claiming, and a retention under an hour", async () => {
    const effects = testEffects(db.pool);
    for (const [field, value] of [
      ["lease", "0s"],
      ["lease", "999999d"],
      ["lease", "30d"],
      ["lease", 0],
      ["wait", "30d"],
      ["wait", -1],
    ] as const) {
      const key = uniq("capture:order");
      const error = await effects.once({ tenant: "acme", key, jobType: "j", [field]: value }, () => 1).catch((e) => e);
      expect(error).toBeInstanceOf(InvalidEffectsOptionsError);
      expect(error.field).toBe(field);
      const jobError = await effects
        .job({ tenant: "acme", jobType: "j" }, (job) => job.external(key, () => 1, { [field]: value }))
        .catch((e) => e);
      expect(jobError).toBeInstanceOf(InvalidEffectsOptionsError);
      expect(await rows(key)).toEqual([]);
      expect(() => testEffects(db.pool, { [field]: value })).toThrow(InvalidEffectsOptionsError);
    }
    for (const retention of [0, 1, "1ms"] as const) {
      expect(() => testEffects(db.pool, { retention, maxRetryWindow: 0 })).toThrow(RetentionConfigError);
      expect(() => testEffects(db.pool, { retention, maxRetryWindow: 0 })).toThrow(/under one hour/);
    }
  });
});

describe("item 9: payload fingerprints", () => {
  it("hash a Map, a Set and a BigInt by content, independent of insertion order", () => {
    const h = requestHash;
    expect(h(new Map([["a", 1]]))).not.toBe(h(new Map([["a", 2]])));
    expect(h(new Map([["a", 1]]))).not.toBe(h(new Map()));
    expect(
      h(
        new Map([
          ["a", 1],
          ["b", 2],
        ]),
      ),
    ).toBe(
      h(
        new Map([
          ["b", 2],
          ["a", 1],
        ]),
      ),
    );
    expect(h(new Set([1, 2]))).toBe(h(new Set([2, 1])));
    expect(h(new Set([1]))).not.toBe(h(new Set([2])));
    expect(h({ amount: 1n })).not.toBe(h({ amount: 2n }));
    expect(h({ amount: 1n })).not.toBe(h({ amount: "1" }));
    // A plain JSON payload hashes as it always did (hashes stored by earlier versions still match).
    const plain = { b: [1, { d: 2, c: 3 }], a: "x", when: new Date(0) };
    expect(h(plain)).toBe(createHash("sha256").update(canonicalJson(plain)).digest("hex"));
  });

  it("catches key reuse with a different Map, and refuses a cyclic payload before writing", async () => {
    const effects = testEffects(db.pool);
    const key = uniq("capture:order");
    await effects.once({ tenant: "acme", key, jobType: "j", payload: new Map([["cents", 100]]) }, () => 1);
    const reuse = await effects
      .once({ tenant: "acme", key, jobType: "j", payload: new Map([["cents", 999]]) }, () => 2)
      .catch((e) => e);
    expect(reuse).toBeInstanceOf(EffectKeyReuseError);
    const cyclic: Record<string, unknown> = {};
    cyclic.me = cyclic;
    const other = uniq("capture:order");
    const error = await effects.once({ tenant: "acme", key: other, jobType: "j", payload: cyclic }, () => 1).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidEffectInputError);
    expect(error.field).toBe("payload");
    expect(await rows(other)).toEqual([]);
  });
});

describe("item 10: every bad input is a rejected promise with a typed error naming the field", () => {
  it("once, job, claim and the steps never throw synchronously, never a bare TypeError", async () => {
    const effects = testEffects(db.pool);
    const ok = { tenant: "acme", key: "capture:o-1", jobType: "j" };
    const calls: [string, () => Promise<unknown>][] = [
      ["input", () => effects.once(null as never, () => 1)],
      ["input", () => effects.once(undefined as never, () => 1)],
      ["fn", () => effects.once(ok, "nope" as never)],
      ["jobType", () => effects.once({ ...ok, jobType: 5 as never }, () => 1)],
      ["jobType", () => effects.once({ ...ok, jobType: "" }, () => 1)],
      ["publishedAt", () => effects.once({ ...ok, publishedAt: "banana" }, () => 1)],
      ["publishedAt", () => effects.once({ ...ok, publishedAt: {} as never }, () => 1)],
      ["messageId", () => effects.once({ ...ok, messageId: 5 as never }, () => 1)],
      ["attempt", () => effects.once({ ...ok, attempt: -1 }, () => 1)],
      ["attempt", () => effects.once({ ...ok, attempt: 1.5 }, () => 1)],
      ["redelivered", () => effects.once({ ...ok, redelivered: "yes" as never }, () => 1)],
      ["policy", () => effects.once({ ...ok, policy: "twice" as never }, () => 1)],
      ["tenant", () => effects.once({ ...ok, tenant: "" }, () => 1)],
      ["tenant", () => effects.once({ ...ok, tenant: 7 as never }, () => 1)],
      ["key", () => effects.once({ ...ok, key: "no-step-name" }, () => 1)],
      ["key", () => effects.once({ ...ok, key: null as never }, () => 1)],
      ["lease", () => effects.once({ ...ok, lease: "soon" as never }, () => 1)],
      ["lease", () => effects.once({ ...ok, lease: {} as never }, () => 1)],
      ["tx", () => effects.once({ ...ok, policy: "transactional", tx: "client" as never }, () => 1)],
      ["delivery", () => effects.job(null as never, () => 1)],
      ["handler", () => effects.job({ tenant: "acme", jobType: "j" }, null as never)],
      ["jobType", () => effects.job({ tenant: "acme", jobType: "" }, () => 1)],
      ["publishedAt", () => effects.job({ tenant: "acme", jobType: "j", publishedAt: "banana" }, () => 1)],
      ["tenant", () => effects.job({ tenant: "", jobType: "j" }, () => 1)],
      ["key", () => effects.job({ tenant: "acme", jobType: "j" }, (job) => job.external("bad key", () => 1))],
      ["fn", () => effects.job({ tenant: "acme", jobType: "j" }, (job) => job.external("a:b", null as never))],
      ["options", () => effects.job({ tenant: "acme", jobType: "j" }, (job) => job.atMostOnce("a:b", () => 1, 5 as never))],
      [
        "wait",
        () => effects.job({ tenant: "acme", jobType: "j" }, (job) => job.transaction("a:b", () => 1, { wait: "x" as never })),
      ],
      ["input", () => effects.claim(null as never)],
      ["jobType", () => effects.claim({ ...ok, jobType: undefined as never })],
      ["publishedAt", () => effects.claim({ ...ok, publishedAt: "banana" })],
    ];
    for (const [field, call] of calls) {
      let promise: Promise<unknown> | undefined;
      expect(() => {
        promise = call();
      }, field).not.toThrow();
      const error = await promise!.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, field).toBeInstanceOf(EffectsError);
      expect((error as EffectsError).field, `${field}: ${(error as Error).message}`).toBe(field);
      expect((error as EffectsError).disposition).toBe("dead-letter");
    }
    const effectRows = await db.pool.query("SELECT count(*)::int AS n FROM effects WHERE key IN ('capture:o-1', 'a:b')");
    expect(effectRows.rows[0].n).toBe(0);
  });
});

describe("item 11: null and undefined round-trip", () => {
  it("a step returning null or nothing gives null on the first run and on every duplicate", async () => {
    const effects = testEffects(db.pool);
    for (const value of [null, undefined]) {
      const key = uniq("capture:order");
      const first = await effects.once({ tenant: "acme", key, jobType: "j" }, () => value);
      const second = await effects.once({ tenant: "acme", key, jobType: "j" }, () => value);
      expect(first.outcome).toBeNull();
      expect(second.outcome).toBeNull();
      expect(second.result).toBe("duplicate");
      const stepKey = uniq("mail:order");
      const viaJob = () => effects.job({ tenant: "acme", jobType: "j" }, (job) => job.external(stepKey, () => value));
      expect((await viaJob()).value).toBeNull();
      expect((await viaJob()).value).toBeNull();
    }
  });
});

describe("item 12: key and tenant lengths are counted in code points", () => {
  it(`accepts ${MAX_KEY_LENGTH} code points even when they are 2 UTF-16 units each, refuses one more`, async () => {
    const effects = testEffects(db.pool);
    const emoji = "😀";
    const key = `s:${emoji.repeat(MAX_KEY_LENGTH - 2)}`;
    expect(key.length).toBeGreaterThan(MAX_KEY_LENGTH);
    expect((await effects.once({ tenant: emoji.repeat(MAX_KEY_LENGTH), key, jobType: "j" }, () => 1)).result).toBe("ran");
    for (const [field, input] of [
      ["key", { tenant: "acme", key: `${key}${emoji}` }],
      ["tenant", { tenant: emoji.repeat(MAX_KEY_LENGTH + 1), key: "s:x" }],
      ["key", { tenant: "acme", key: "s:\ud800" }],
    ] as const) {
      const error = await effects.once({ ...input, jobType: "j" }, () => 1).catch((e) => e);
      expect(error).toBeInstanceOf(InvalidEffectKeyError);
      expect(error.field).toBe(field);
    }
    const long = await effects
      .once({ tenant: "acme", key: `s:${"x".repeat(MAX_KEY_LENGTH)}`, jobType: "j" }, () => 1)
      .catch((e) => e);
    expect(long.message).toMatch(/code points/);
  });
});

describe("item 13: the claim's look-ahead bound", () => {
  it("still sees a row dated in the next partition (the database clock stepped back across midnight)", async () => {
    const effects = testEffects(db.pool);
    const key = uniq("capture:order");
    await effects.once({ tenant: "acme", key, jobType: "j" }, () => "first");
    // As if the row was written before the clock stepped back: dated just after the next UTC
    // midnight, in tomorrow's partition (at most 24 h ahead of now).
    await db.pool.query(
      "UPDATE effects SET created_at = date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day' + interval '1 millisecond' WHERE key = $1",
      [key],
    );
    const { rows: part } = await db.pool.query(
      "SELECT tableoid::regclass::text AS part, created_at > now() AS future FROM effects WHERE key = $1",
      [key],
    );
    expect(part[0].future).toBe(true);
    let ran = false;
    const again = await effects.once({ tenant: "acme", key, jobType: "j" }, () => {
      ran = true;
      return "second";
    });
    expect(ran).toBe(false);
    expect(again).toMatchObject({ result: "duplicate", outcome: "first" });
    expect(await rows(key)).toHaveLength(1);
  });
});

describe("item 3: a pool without an error listener", () => {
  it("gets one warning, on first use; a pool with a listener gets none", async () => {
    const bare = new pg.Pool({ connectionString: db.url, max: 1 });
    const guarded = new pg.Pool({ connectionString: db.url, max: 1 });
    guarded.on("error", () => {});
    try {
      for (const [pool, expected] of [
        [bare, 1],
        [guarded, 0],
      ] as const) {
        const { logger, lines } = captureLogger();
        const effects = createEffects({ db: pool, registry: new Registry(), logger, rollups: false, flushInterval: 0 });
        await effects.once({ tenant: "acme", key: uniq("a:b"), jobType: "j" }, () => 1);
        await effects.once({ tenant: "acme", key: uniq("a:b"), jobType: "j" }, () => 1);
        expect(lines.filter((l) => /no 'error' listener/.test(String(l.msg)))).toHaveLength(expected);
        await effects.close();
      }
    } finally {
      await bare.end();
      await guarded.end();
    }
    expect(silentLogger).toBeDefined();
  });
});
