/**
 * The MariaDB / MySQL half of bench:claims (claims.ts runs it when MARIADB_URL is set or with
 * --mariadb): the library's claims on the MySQL store against a raw `INSERT … ON DUPLICATE KEY UPDATE`
 * into an unpartitioned table of the same width on the same server, in the same run, alternated so
 * drift hits both; then the cost of each kind of claim per operation with one caller (fresh,
 * duplicate, takeover), as River publishes for its unique inserts.
 */
import mysql from "mysql2/promise";
import { createMysqlScratchDatabase } from "../lib/db/scratch";
import { type EffectsDb, migrate } from "../lib/idempotency";
import { benchNumber } from "./env";
import { benchEffects, percentile, runFor } from "./support";

const SECONDS = benchNumber("BENCH_SECONDS", 4);
const CONCURRENCY = benchNumber("BENCH_CONCURRENCY", 16, { integer: true });
const BATCH = benchNumber("BENCH_BATCH", 50, { integer: true });
/** Operations per kind in the one-caller phase. */
const SERIAL_OPS = benchNumber("BENCH_SERIAL_OPS", 2000, { integer: true });
const TENANTS = 8;
const tenantOf = (w: number) => `bench-${w % TENANTS}`;

// As wide as an effects row (bench/raw-insert.ts's table, in MySQL's types). `ON DUPLICATE KEY
// UPDATE tenant_id = tenant_id` is MySQL's ON CONFLICT DO NOTHING: it inserts, or locks the existing
// row and changes nothing (no INSERT IGNORE: that would also swallow a NOT NULL or truncation error).
const RAW_TABLE = `CREATE TABLE raw_claims (
  tenant_id VARCHAR(255) NOT NULL, \`key\` VARCHAR(255) NOT NULL, job_type VARCHAR(255) NOT NULL, status VARCHAR(16) NOT NULL,
  policy VARCHAR(16) NOT NULL, attempt INT NOT NULL DEFAULT 1, owner VARCHAR(255), lease_until DATETIME(3),
  first_message_id VARCHAR(1000), last_message_id VARCHAR(1000), request_hash VARCHAR(128),
  created_at DATETIME(3) NOT NULL, updated_at DATETIME(3) NOT NULL, PRIMARY KEY (tenant_id, \`key\`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`;
const RAW_INSERT = `INSERT INTO raw_claims (tenant_id, \`key\`, job_type, status, policy, owner, lease_until, first_message_id,
  last_message_id, created_at, updated_at)
VALUES (?, ?, 'bench', 'in_progress', 'once', ?, UTC_TIMESTAMP(3) + INTERVAL 30 SECOND, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))
ON DUPLICATE KEY UPDATE tenant_id = tenant_id`;

export interface MysqlMeasured {
  serverVersion: string;
  libPerS: number;
  rawPerS: number;
  offPerS: number;
  batchPerS: number;
  dupLib: number;
  dupRaw: number;
  oncePerS: number;
  /** One caller: µs per operation (median) of each kind of claim, and of the raw insert. */
  serialUs: { fresh: number; duplicate: number; takeover: number; raw: number };
  roundTripsPerClaim: number;
}

export async function measureMysql(url: string, say: (line: string) => void): Promise<MysqlMeasured> {
  const scratch = await createMysqlScratchDatabase(url, { prefix: "onceboard_bench" });
  // The drivers' defaults otherwise (CLIENT_FOUND_ROWS on): the library decides nothing by affected rows.
  const pool = mysql.createPool({ uri: scratch.url, connectionLimit: CONCURRENCY + 2 });
  const [[{ version }]] = (await pool.query("SELECT VERSION() AS version")) as unknown as [[{ version: string }]];
  const db = pool as unknown as EffectsDb;
  let statements = 0;
  for (const method of ["query", "execute"] as const) {
    const original = pool[method].bind(pool) as (...args: unknown[]) => unknown;
    (pool as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      statements++;
      return original(...args);
    };
  }
  await migrate(pool as unknown as Parameters<typeof migrate>[0], { schema: scratch.name });
  await pool.query(RAW_TABLE);
  const effects = benchEffects(db, { schema: scratch.name });
  const uncoalesced = benchEffects(db, { schema: scratch.name, coalesce: false });
  try {
    let seq = 0;
    const raw = (w: number, i: number) =>
      pool.execute(RAW_INSERT, [tenantOf(w), `fresh:${seq}-${w}-${i}`, `o${w}`, `m${i}`, `m${i}`]);
    const freshWith = (lib: typeof effects, tag: string) => async (w: number, i: number) => {
      const r = await lib.claim({
        tenant: tenantOf(w),
        key: `fresh:${tag}${seq}-${w}-${i}`,
        jobType: "bench",
        messageId: `m${i}`,
      });
      if (r.kind !== "owned") throw new Error(`expected a fresh claim, got ${r.kind}`);
    };
    say("MariaDB: warming up");
    await runFor(CONCURRENCY, 1, raw);
    await runFor(CONCURRENCY, 1, freshWith(effects, ""));
    await runFor(CONCURRENCY, 1, freshWith(uncoalesced, "off-"));

    const fresh = { raw: { ops: 0, s: 0 }, lib: { ops: 0, s: 0, statements: 0 }, off: { ops: 0, s: 0 } };
    for (let round = 1; round <= 2; round++) {
      seq = round;
      const r = await runFor(CONCURRENCY, SECONDS, raw);
      fresh.raw.ops += r.ops;
      fresh.raw.s += r.ops / r.perSecond;
      const before = statements;
      const l = await runFor(CONCURRENCY, SECONDS, freshWith(effects, ""));
      fresh.lib.ops += l.ops;
      fresh.lib.s += l.ops / l.perSecond;
      fresh.lib.statements += statements - before;
      const o = await runFor(CONCURRENCY, SECONDS, freshWith(uncoalesced, "off-"));
      fresh.off.ops += o.ops;
      fresh.off.s += o.ops / o.perSecond;
      say(
        `MariaDB fresh round ${round}: raw ${r.perSecond.toFixed(0)}/s, library ${l.perSecond.toFixed(0)}/s, coalescing off ${o.perSecond.toFixed(0)}/s`,
      );
    }

    const batch = await runFor(Math.max(1, Math.floor(CONCURRENCY / 4)), SECONDS, async (w, i) => {
      const answers = await effects.claimMany(
        Array.from({ length: BATCH }, (_, k) => ({ tenant: tenantOf(w + i), key: `batch:${w}-${i}-${k}`, jobType: "bench" })),
      );
      if (answers.some((a) => a.kind !== "owned")) throw new Error("expected fresh claims in the batch");
    });
    say(`MariaDB batched: ${(batch.perSecond * BATCH).toFixed(0)} claims/s (${BATCH} per call)`);

    const once = await runFor(CONCURRENCY, SECONDS, (w, i) =>
      effects.once({ tenant: tenantOf(w), key: `once:${w}-${i}`, jobType: "bench", messageId: `m${i}` }, () => ({ ok: true })),
    );
    say(`MariaDB once() (claim + completion): ${once.perSecond.toFixed(0)}/s`);

    // Duplicates: completed keys for the library, existing keys for raw.
    const KEYS = 4000;
    say(`MariaDB: preparing ${KEYS} completed effects for the duplicate phase`);
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, w) => {
        for (let k = w; k < KEYS; k += CONCURRENCY) {
          await effects.once({ tenant: tenantOf(k), key: `dup:${k}`, jobType: "bench" }, () => ({ chargeId: `ch_${k}` }));
          await pool.execute(RAW_INSERT, [tenantOf(k), `dup:${k}`, "o", "m", "m"]);
        }
      }),
    );
    const dupKey = (w: number, i: number) => (w * 7919 + i) % KEYS;
    const dup = { raw: { ops: 0, s: 0 }, lib: { ops: 0, s: 0, statements: 0 } };
    for (let round = 1; round <= 2; round++) {
      const r = await runFor(CONCURRENCY, SECONDS, (w, i) => {
        const k = dupKey(w, i);
        return pool.execute(RAW_INSERT, [tenantOf(k), `dup:${k}`, "o", "m", "m"]);
      });
      dup.raw.ops += r.ops;
      dup.raw.s += r.ops / r.perSecond;
      const before = statements;
      const l = await runFor(CONCURRENCY, SECONDS, async (w, i) => {
        const k = dupKey(w, i);
        const answer = await effects.once({ tenant: tenantOf(k), key: `dup:${k}`, jobType: "bench", attempt: 2 }, () => {
          throw new Error("a duplicate ran");
        });
        if (!answer.duplicate) throw new Error("expected a duplicate");
      });
      dup.lib.ops += l.ops;
      dup.lib.s += l.ops / l.perSecond;
      dup.lib.statements += statements - before;
      say(`MariaDB duplicate round ${round}: raw ${r.perSecond.toFixed(0)}/s, library ${l.perSecond.toFixed(0)}/s`);
    }

    // One caller, one operation at a time: what each kind of claim costs.
    const serial = async (op: (i: number) => Promise<unknown>): Promise<number> => {
      const us: number[] = [];
      for (let i = 0; i < SERIAL_OPS; i++) {
        const started = performance.now();
        await op(i);
        us.push((performance.now() - started) * 1000);
      }
      return percentile(us, 50);
    };
    // Takeovers: in-progress claims whose owner died (lease expired), one per operation.
    for (let from = 1; from <= SERIAL_OPS; from += 500) {
      const keys = Array.from({ length: Math.min(500, SERIAL_OPS - from + 1) }, (_, k) => `takeover:${from + k}`);
      await pool.query(
        `INSERT INTO effects (tenant_id, \`key\`, job_type, status, policy, attempt, owner, lease_until, created_at, updated_at)
         VALUES ${keys.map(() => "('serial', ?, 'bench', 'in_progress', 'external', 1, 'dead', UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))").join(", ")}`,
        keys,
      );
    }
    const serialUs = {
      raw: await serial((i) => pool.execute(RAW_INSERT, ["serial", `serial:${i}`, "o", "m", "m"])),
      fresh: await serial(async (i) => {
        const r = await uncoalesced.claim({ tenant: "serial", key: `fresh:${i}`, jobType: "bench" });
        if (r.kind !== "owned") throw new Error("expected a fresh claim");
      }),
      duplicate: await serial(async (i) => {
        const k = i % KEYS;
        const r = await uncoalesced.claim({ tenant: tenantOf(k), key: `dup:${k}`, jobType: "bench", attempt: 2 });
        if (r.kind !== "duplicate") throw new Error("expected a duplicate");
      }),
      takeover: await serial(async (i) => {
        const r = await uncoalesced.claim({ tenant: "serial", key: `takeover:${i + 1}`, jobType: "bench", policy: "external" });
        if (r.kind !== "owned" || r.claim.how !== "takeover") throw new Error("expected a takeover");
      }),
    };
    say(
      `MariaDB one caller, median µs per operation: raw insert ${serialUs.raw.toFixed(0)}, fresh claim ${serialUs.fresh.toFixed(0)}, duplicate ${serialUs.duplicate.toFixed(0)}, takeover ${serialUs.takeover.toFixed(0)}`,
    );

    const rate = (x: { ops: number; s: number }) => x.ops / x.s;
    const measured: MysqlMeasured = {
      serverVersion: version,
      libPerS: rate(fresh.lib),
      rawPerS: rate(fresh.raw),
      offPerS: rate(fresh.off),
      batchPerS: batch.perSecond * BATCH,
      dupLib: rate(dup.lib),
      dupRaw: rate(dup.raw),
      oncePerS: once.perSecond,
      serialUs,
      roundTripsPerClaim: (fresh.lib.statements + dup.lib.statements) / (fresh.lib.ops + dup.lib.ops),
    };
    say(
      `MariaDB ${version}: fresh library ${measured.libPerS.toFixed(0)}/s vs raw ${measured.rawPerS.toFixed(0)}/s; duplicates ${measured.dupLib.toFixed(0)}/s vs raw ${measured.dupRaw.toFixed(0)}/s; ${measured.roundTripsPerClaim.toFixed(3)} statements per claim`,
    );
    return measured;
  } finally {
    await effects.close();
    await uncoalesced.close();
    await pool.end().catch(() => {});
    await scratch.drop().catch(() => {});
  }
}

/** The MariaDB keys of bench:claims's summary line. */
export function mysqlPairs(m: MysqlMeasured): string[] {
  return [
    `mariadb_ratio=${(m.libPerS / m.rawPerS).toFixed(3)}`,
    `mariadb_duplicate_ratio=${(m.dupLib / m.dupRaw).toFixed(3)}`,
    `mariadb_library_per_s=${m.libPerS.toFixed(0)}`,
    `mariadb_raw_per_s=${m.rawPerS.toFixed(0)}`,
    `mariadb_uncoalesced_per_s=${m.offPerS.toFixed(0)}`,
    `mariadb_batch_per_s=${m.batchPerS.toFixed(0)}`,
    `mariadb_duplicate_per_s=${m.dupLib.toFixed(0)}`,
    `mariadb_raw_duplicate_per_s=${m.dupRaw.toFixed(0)}`,
    `mariadb_once_per_s=${m.oncePerS.toFixed(0)}`,
    `mariadb_statements_per_claim=${m.roundTripsPerClaim.toFixed(3)}`,
    `mariadb_raw_us=${m.serialUs.raw.toFixed(0)}`,
    `mariadb_fresh_us=${m.serialUs.fresh.toFixed(0)}`,
    `mariadb_duplicate_us=${m.serialUs.duplicate.toFixed(0)}`,
    `mariadb_takeover_us=${m.serialUs.takeover.toFixed(0)}`,
  ];
}
