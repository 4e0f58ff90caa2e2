import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../../test/database";
import {
  ClaimSettledError,
  EffectInFlightError,
  EffectKeyReuseError,
  InvalidEffectKeyError,
  LeaseLostError,
  OutcomeTooLargeError,
} from "../errors";
import { withEachEngine } from "./engine-suite";
import { appRun, type EngineDatabase } from "./engines";
import { countingPool, newPool, sleep, testEffects } from "./helpers";

let db: EngineDatabase;
let n = 0;
const uniq = (prefix: string) => `${prefix}:${++n}-${Math.random().toString(36).slice(2, 7)}`;

/** `column IN ($from, …)` for `values` (PostgreSQL's `= ANY($1)`, written for both engines). */
const inList = (column: string, values: readonly unknown[], from = 1) =>
  `${column} IN (${values.map((_, i) => `$${i + from}`).join(", ")})`;
const KEY = () => (db.engine === "postgres" ? "key" : "`key`");

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  (engine) => {
    describe("effects.claimMany (batched claims)", () => {
      it("answers each key on its own, in one round trip: fresh, duplicate, key reuse, in flight, the same key twice, an invalid key", async () => {
        const counted = countingPool(db.pool);
        const effects = testEffects(counted.pool, { schema: db.schema });
        try {
          const done = uniq("capture");
          await effects.once({ tenant: "t", key: done, jobType: "j", payload: { a: 1 } }, () => ({ chargeId: "ch_1" }));
          const reused = uniq("capture");
          await effects.once({ tenant: "t", key: reused, jobType: "j", payload: { a: 1 } }, () => "ok");
          const live = uniq("capture");
          expect((await effects.claim({ tenant: "t", key: live, jobType: "j" })).kind).toBe("owned");
          const fresh = [uniq("capture"), uniq("capture"), uniq("capture")];
          const twice = uniq("capture");

          counted.reset();
          const answers = await effects.claimMany([
            { tenant: "t", key: fresh[0] ?? "", jobType: "j" },
            { tenant: "t", key: done, jobType: "j", payload: { a: 1 } },
            { tenant: "t", key: reused, jobType: "j", payload: { a: 2 } },
            { tenant: "t", key: fresh[1] ?? "", jobType: "j" },
            { tenant: "t", key: live, jobType: "j" },
            { tenant: "t", key: twice, jobType: "j" },
            { tenant: "t", key: twice, jobType: "j" },
            { tenant: "t", key: "no step prefix", jobType: "j" },
            { tenant: "u", key: fresh[2] ?? "", jobType: "j" },
          ]);
          expect(counted.count()).toBe(1);
          expect(answers.map((a) => a.kind)).toEqual([
            "owned",
            "duplicate",
            "error",
            "owned",
            "error",
            "owned",
            "error",
            "error",
            "owned",
          ]);
          expect(answers[1]).toMatchObject({ kind: "duplicate", outcome: { chargeId: "ch_1" } });
          const errorOf = (i: number) => {
            const a = answers[i];
            return a?.kind === "error" ? a.error : null;
          };
          expect(errorOf(2)).toBeInstanceOf(EffectKeyReuseError);
          expect(errorOf(4)).toBeInstanceOf(EffectInFlightError);
          expect(errorOf(6)).toBeInstanceOf(EffectInFlightError);
          expect(errorOf(7)).toBeInstanceOf(InvalidEffectKeyError);

          // Owned claims are real claims: completing one makes the next claim a duplicate.
          for (const a of answers) if (a.kind === "owned") await a.claim.complete({ ok: true });
          const again = await effects.claim({ tenant: "t", key: fresh[0] ?? "", jobType: "j", attempt: 2 });
          expect(again).toMatchObject({ kind: "duplicate", outcome: { ok: true } });
          const [row] = await db.rows<{ n: number }>(`SELECT count(*) AS n FROM effects WHERE ${KEY()} = $1`, [twice]);
          expect(Number(row?.n)).toBe(1);
        } finally {
          await effects.close();
        }
      });

      it("concurrent batches and single claims over the same keys, in different orders, own each key exactly once and never deadlock", async () => {
        const effects = testEffects(db, { wait: "5s" });
        try {
          const keys = Array.from({ length: 40 }, () => uniq("capture"));
          const shuffled = (seed: number) =>
            [...keys].sort(
              (a, b) =>
                ((a.length * seed + a.charCodeAt(a.length - 1)) % 7) - ((b.length * seed + b.charCodeAt(b.length - 1)) % 7) ||
                (seed % 2 ? a.localeCompare(b) : b.localeCompare(a)),
            );
          const owners = new Map<string, number>();
          const own = (key: string) => owners.set(key, (owners.get(key) ?? 0) + 1);
          const batches = Array.from({ length: 6 }, async (_, s) => {
            const order = shuffled(s + 1);
            const answers = await effects.claimMany(order.map((key) => ({ tenant: "t", key, jobType: "j" })));
            for (const [i, a] of answers.entries()) {
              if (a.kind === "owned") {
                own(order[i] ?? "");
                await a.claim.complete({ by: "batch" });
              } else if (a.kind === "error" && !(a.error instanceof EffectInFlightError)) throw a.error;
            }
          });
          const singles = keys.slice(0, 20).map(async (key) => {
            const r = await effects.claim({ tenant: "t", key, jobType: "j" }).catch((e) => {
              if (e instanceof EffectInFlightError) return null;
              throw e;
            });
            if (r?.kind === "owned") {
              own(key);
              await r.claim.complete({ by: "single" });
            }
          });
          await Promise.all([...batches, ...singles]);
          for (const key of keys) expect({ key, owned: owners.get(key) ?? 0 }).toEqual({ key, owned: 1 });
        } finally {
          await effects.close();
        }
      });

      it("claims its fresh keys set-wise, yet finds claims in older partitions and waits behind a key locked elsewhere", async () => {
        const effects = testEffects(db, { wait: "5s" });
        const holder = await db.begin();
        try {
          const now = new Date();
          const yesterdayLastMs = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - 1);
          const done = uniq("capture");
          const expired = uniq("capture");
          await db.run(
            {
              pg: `INSERT INTO effects (tenant_id, key, job_type, status, policy, owner, lease_until, outcome, created_at)
         VALUES ('t', $1, 'j', 'completed', 'external', 'w-old', NULL, '"first"', $3),
                ('t', $2, 'j', 'in_progress', 'external', 'w-dead', $3, NULL, $3)`,
              mysql: `INSERT INTO effects (tenant_id, \`key\`, job_type, status, policy, owner, lease_until, outcome, created_at, updated_at)
         VALUES ('t', $1, 'j', 'completed', 'external', 'w-old', NULL, '"first"', $3, $3),
                ('t', $2, 'j', 'in_progress', 'external', 'w-dead', $3, NULL, $3, $3)`,
            },
            [
              done,
              expired,
              engine === "postgres" ? yesterdayLastMs : yesterdayLastMs.toISOString().slice(0, 23).replace("T", " "),
            ],
          );
          const fresh = Array.from({ length: 30 }, () => uniq("capture"));
          // Another claimer holds one key for 300 ms, then lets it go without a row: on PostgreSQL the
          // claim's advisory lock, committed; on MariaDB the key's row, inserted and rolled back. The
          // batch waits behind it, and claims the held key too once it is free.
          const held = fresh[17] ?? "";
          if (engine === "postgres") {
            await appRun(holder.tx, "SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(1) || $2, 0))", ["t", held]);
          } else {
            await appRun(
              holder.tx,
              "INSERT INTO effects (tenant_id, `key`, job_type, status, policy, owner, created_at, updated_at) VALUES ('t', $1, 'j', 'in_progress', 'external', 'holder', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
              [held],
            );
          }
          const release = sleep(300).then(() => (engine === "postgres" ? holder.commit() : holder.rollback()));
          const keys = [done, ...fresh.slice(0, 10), expired, ...fresh.slice(10)];
          const answers = await effects.claimMany(keys.map((key) => ({ tenant: "t", key, jobType: "j" })));
          await release;

          expect(answers[0]).toMatchObject({ kind: "duplicate", outcome: "first" });
          expect(answers[11]).toMatchObject({ kind: "owned" });
          for (const [i, a] of answers.entries())
            if (i !== 0) expect({ key: keys[i], kind: a.kind }).toEqual({ key: keys[i], kind: "owned" });
          const rows = (
            await db.rows<{ key: string; n: number; attempt: number; yesterday: boolean | number }>(
              {
                pg: `SELECT key, count(*)::int AS n, max(attempt) AS attempt, bool_and(created_at < date_trunc('day', now())) AS yesterday
           FROM effects WHERE tenant_id = 't' AND key = ANY($1) GROUP BY key`,
                mysql: `SELECT \`key\`, COUNT(*) AS n, MAX(attempt) AS attempt, MIN(created_at < UTC_DATE()) AS yesterday
           FROM effects WHERE tenant_id = 't' AND ${inList("`key`", keys)} GROUP BY \`key\``,
              },
              engine === "postgres" ? [keys] : keys,
            )
          ).map((r) => ({ ...r, n: Number(r.n), attempt: Number(r.attempt), yesterday: Boolean(Number(r.yesterday)) }));
          expect(rows).toHaveLength(keys.length);
          for (const row of rows) expect(row.n).toBe(1);
          // The expired claim from yesterday was taken over in place, not claimed again today.
          expect(rows.find((r) => r.key === expired)).toMatchObject({ attempt: 2, yesterday: true });
          expect(rows.find((r) => r.key === done)).toMatchObject({ attempt: 1, yesterday: true });
        } finally {
          holder.release();
          await effects.close();
        }
      });

      // PostgreSQL's plans and partitions.
      it.runIf(engine === "postgres")(
        "claims, completes, fails and counts duplicates by each key's index, even with plans cached while the day's partition was empty",
        async () => {
          // A database of its own: today's partition empty and never analyzed, as every new day's is.
          const fresh = await createTestDatabase({ poolSize: 1 });
          // One connection, so the plan it caches early is the one it uses after the partition grew.
          const pool = newPool(fresh.url, 1);
          // Coalesced, so that the concurrent fail() calls go as one batched statement.
          const effects = testEffects(pool, { coalesce: true });
          const todays = `effects_p${new Date().toISOString().slice(0, 10).replaceAll("-", "")}`;
          // Every batched statement on a row of effects: claims, completions, failures, and (replaying
          // the completed keys) the duplicate ledger's flush.
          const batch = async (size: number) => {
            const keys = Array.from({ length: size }, () => uniq("probe"));
            const answers = await effects.claimMany(keys.map((key) => ({ tenant: "t", key, jobType: "j" })));
            const claims = answers.map((a) => (a.kind === "owned" ? a.claim : null));
            if (claims.some((c) => c === null)) throw new Error("expected fresh claims");
            const owned = claims as NonNullable<(typeof claims)[number]>[];
            const half = Math.floor(size / 2);
            const completed = await effects.completeMany(owned.slice(0, half).map((claim) => ({ claim, outcome: 1 })));
            expect(completed.every((c) => c.ok)).toBe(true);
            await Promise.all(owned.slice(half).map((claim) => claim.fail(new Error("declined"))));
            const replays = await effects.claimMany(keys.slice(0, half).map((key) => ({ tenant: "t", key, jobType: "j" })));
            expect(replays.every((a) => a.kind === "duplicate")).toBe(true);
            expect(await effects.flush()).toBe(true);
          };
          try {
            // Past the plan cache's five custom plans: the connection now holds a generic plan made
            // while the partition had next to no rows.
            for (let i = 0; i < 8; i++) await batch(20);
            await fresh.pool.query(
              `INSERT INTO effects (tenant_id, key, job_type, status, policy, owner, created_at)
         SELECT 'filler', 'fill:' || g, 'j', 'completed', 'external', 'w', now() FROM generate_series(1, 20000) g`,
            );
            for (let i = 0; i < 20; i++) await batch(50);
            await effects.close();
            await pool.end(); // its backend exits and reports its scans
            // The counts arrive when that backend has exited: wait for its index probes to show.
            const scans = async () => {
              await fresh.pool.query("SELECT pg_stat_clear_snapshot()");
              const { rows } = await fresh.pool.query<{ seq_scan: string; idx_scan: string | null }>(
                "SELECT seq_scan, idx_scan FROM pg_stat_user_tables WHERE relname = $1",
                [todays],
              );
              return { seq: Number(rows[0]?.seq_scan), idx: Number(rows[0]?.idx_scan ?? 0) };
            };
            let seen = await scans();
            for (let i = 0; i < 50 && seen.idx < 20 * 50; i++) {
              await sleep(100);
              seen = await scans();
            }
            expect(seen.seq).toBe(0);
            expect(seen.idx).toBeGreaterThanOrEqual(20 * 50);
          } finally {
            await fresh.drop();
          }
        },
      );

      it("two workers' pools claiming random overlapping batches for 2 s perform each key's effect exactly once", async () => {
        const pools = [db.newPool(5), db.newPool(5)];
        const workers = pools.map((pool) => testEffects(pool, { wait: "5s", schema: db.schema }));
        const table = `batch_side_effects_${n++}`;
        // No unique constraint: a second run of a key's effect would show as a second row.
        await db.run({
          pg: `CREATE TABLE ${table} (key text NOT NULL)`,
          mysql: `CREATE TABLE ${table} (k VARCHAR(255) NOT NULL)`,
        });
        const column = engine === "postgres" ? "key" : "k";
        try {
          const keys = Array.from({ length: 200 }, () => uniq("capture"));
          let owned = 0;
          const deadline = Date.now() + 2000;
          let seed = 7;
          const random = () => {
            seed = (seed * 1103515245 + 12345) % 2147483648;
            return seed / 2147483648;
          };
          const loop = async (effects: (typeof workers)[number]) => {
            while (Date.now() < deadline) {
              const batch = Array.from({ length: 30 }, () => keys[Math.floor(random() * keys.length)] ?? "");
              const answers = await effects.claimMany(batch.map((key) => ({ tenant: "t", key, jobType: "j" })));
              for (const [i, a] of answers.entries()) {
                if (a.kind === "owned") {
                  owned++;
                  await db.run(`INSERT INTO ${table} (${column}) VALUES ($1)`, [batch[i]]);
                  await a.claim.complete({ ok: true });
                } else if (a.kind === "error" && !(a.error instanceof EffectInFlightError)) throw a.error;
              }
            }
          };
          await Promise.all(workers.flatMap((effects) => [loop(effects), loop(effects), loop(effects), loop(effects)]));
          expect(await db.rows(`SELECT ${column}, count(*) AS n FROM ${table} GROUP BY ${column} HAVING count(*) > 1`)).toEqual(
            [],
          );
          const [total] = await db.rows<{ n: number }>(`SELECT count(*) AS n FROM ${table}`);
          expect(Number(total?.n)).toBe(owned);
          expect(owned).toBeGreaterThan(100);
          const [claimed] = await db.rows<{ n: number }>(
            `SELECT count(*) AS n FROM effects WHERE tenant_id = 't' AND ${inList(KEY(), keys)}`,
            keys,
          );
          expect(Number(claimed?.n)).toBe(owned);
        } finally {
          for (const effects of workers) await effects.close();
          for (const pool of pools) await db.closePool(pool);
        }
      });

      it("completeMany stores a batch's outcomes in one round trip, each claim answered on its own: stored, taken over, too large", async () => {
        const counted = countingPool(db.pool);
        const effects = testEffects(counted.pool, { maxOutcomeBytes: 100, lease: "1s", schema: db.schema });
        try {
          const keys = [uniq("capture"), uniq("capture"), uniq("capture")];
          const claimed = await effects.claimMany(keys.map((key) => ({ tenant: "t", key, jobType: "j" })));
          const claims = claimed.map((a) => (a.kind === "owned" ? a.claim : null));
          const [kept, lost, large] = claims;
          if (!kept || !lost || !large) throw new Error("expected three owned claims");
          // The second claim's lease runs out and another delivery takes it over.
          await db.expireLease("t", keys[1] ?? "");
          expect((await effects.claim({ tenant: "t", key: keys[1] ?? "", jobType: "j", attempt: 2 })).kind).toBe("owned");

          counted.reset();
          const answers = await effects.completeMany([
            { claim: kept, outcome: { chargeId: "ch_1" } },
            { claim: lost, outcome: { chargeId: "ch_2" } },
            { claim: large, outcome: "x".repeat(500) },
          ]);
          expect(counted.count()).toBe(1);
          expect(answers[0]).toEqual({ ok: true });
          expect(answers[1]).toMatchObject({ ok: false, error: expect.any(LeaseLostError) });
          expect(answers[2]).toMatchObject({ ok: false, error: expect.any(OutcomeTooLargeError) });
          // Stored as claim.complete() stores: the next claim is a duplicate with the outcome, or with the marker.
          expect(await effects.claim({ tenant: "t", key: keys[0] ?? "", jobType: "j" })).toMatchObject({
            kind: "duplicate",
            outcome: { chargeId: "ch_1" },
          });
          expect(await effects.claim({ tenant: "t", key: keys[2] ?? "", jobType: "j" })).toMatchObject({
            kind: "duplicate",
            missing: { kind: "too_large" },
          });
          // A settled claim is never written again, batched or not.
          await expect(kept.complete({ chargeId: "other" })).rejects.toBeInstanceOf(ClaimSettledError);
          expect((await effects.completeMany([{ claim: kept, outcome: 1 }]))[0]).toMatchObject({
            ok: false,
            error: expect.any(ClaimSettledError),
          });
        } finally {
          await effects.close();
        }
      });
    });

    describe("effects.onceMany (once for a batch)", () => {
      it("answers each input as once would, in two round trips: ran, duplicate, failed (released), in flight, too large, the same key twice, invalid", async () => {
        const counted = countingPool(db.pool);
        const effects = testEffects(counted.pool, { maxOutcomeBytes: 1000, schema: db.schema });
        try {
          const done = uniq("capture");
          await effects.once({ tenant: "t", key: done, jobType: "j" }, () => ({ chargeId: "ch_before" }));
          const live = uniq("capture");
          expect((await effects.claim({ tenant: "t", key: live, jobType: "j" })).kind).toBe("owned");
          const [fresh, failing, big, twice] = [uniq("capture"), uniq("capture"), uniq("capture"), uniq("capture")];
          const runs: string[] = [];

          counted.reset();
          const answers = await effects.onceMany(
            [
              { tenant: "t", key: fresh, jobType: "j" },
              { tenant: "t", key: done, jobType: "j" },
              { tenant: "t", key: failing, jobType: "j" },
              { tenant: "t", key: live, jobType: "j" },
              { tenant: "t", key: big, jobType: "j" },
              { tenant: "t", key: twice, jobType: "j" },
              { tenant: "t", key: twice, jobType: "j" },
              { tenant: "t", key: "no step", jobType: "j" },
            ],
            (claim, index) => {
              runs.push(`${index}:${claim.key}`);
              if (claim.key === failing) throw new Error("provider timeout");
              if (claim.key === big) return "x".repeat(2000);
              return { chargeId: `ch_${index}` };
            },
          );
          // One claim statement and one completion statement for the batch; the second copy of `twice`
          // is run through once after the first settled (its duplicate claim), and the failure's release.
          expect(answers[0]).toMatchObject({ ok: true, result: { result: "ran", outcome: { chargeId: "ch_0" }, attempt: 1 } });
          expect(answers[1]).toMatchObject({ ok: true, result: { result: "duplicate", outcome: { chargeId: "ch_before" } } });
          expect(answers[2]).toMatchObject({ ok: false, error: { message: "provider timeout" } });
          expect((answers[3] as { error: unknown }).error).toBeInstanceOf(EffectInFlightError);
          expect((answers[4] as { error: unknown }).error).toBeInstanceOf(OutcomeTooLargeError);
          expect(answers[5]).toMatchObject({ ok: true, result: { result: "ran", outcome: { chargeId: "ch_5" } } });
          expect(answers[6]).toMatchObject({ ok: true, result: { result: "duplicate", outcome: { chargeId: "ch_5" } } });
          expect((answers[7] as { error: unknown }).error).toBeInstanceOf(InvalidEffectKeyError);
          expect(runs.sort()).toEqual([`0:${fresh}`, `2:${failing}`, `4:${big}`, `5:${twice}`].sort());
          expect(counted.count()).toBe(4);

          // The failed key was released as once releases it: the next delivery retries it at once.
          const retried = await effects.once({ tenant: "t", key: failing, jobType: "j" }, () => "second");
          expect(retried).toMatchObject({ result: "ran", attempt: 2, outcome: "second" });
        } finally {
          await effects.close();
        }
      });

      it("refuses what is not an array or a function, naming the field", async () => {
        const effects = testEffects(db);
        try {
          await expect(effects.onceMany(null as never, () => 1)).rejects.toMatchObject({ field: "inputs" });
          await expect(effects.onceMany([], null as never)).rejects.toMatchObject({ field: "fn" });
          expect(await effects.onceMany([], () => 1)).toEqual([]);
        } finally {
          await effects.close();
        }
      });
    });
  },
  { poolSize: 12 },
);
