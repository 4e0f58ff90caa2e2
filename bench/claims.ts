/**
 * npm run bench:claims — fresh claims per second through the worker library against a raw
 * INSERT … ON CONFLICT DO NOTHING RETURNING into an unpartitioned table, through the same pg pool
 * at the same concurrency, in the same run; then the same for duplicates.
 *
 * Library "fresh claim" = effects.claim(): validation, one onceboard_claim() round trip
 * (advisory lock, look across partitions, insert), metrics and rollups. The completion UPDATE
 * that once() adds afterwards is measured separately (once_per_s) and is not in `ratio`.
 * Library "duplicate" = effects.once() on a completed key: one read-only round trip that returns
 * the stored outcome (the row's duplicate bookkeeping is batched per flush; those flushes are
 * counted as round trips too). Raw duplicate = the same INSERT on an existing key, which returns
 * no row and records nothing.
 *
 * For context (not in `ratio`), each fresh round also times a bare INSERT into effects and the
 * library's own claim statement sent straight through the pool (SQL cost without the library's
 * JavaScript). Round trips are counted by wrapping the pool's query().
 * Batched = effects.claimMany() of BENCH_BATCH fresh keys per call (one round trip, one commit);
 * batch_ratio = batched claims per second / raw single-row inserts per second, alternated.
 * Env: BENCH_SECONDS (default 4 per phase), BENCH_CONCURRENCY (16), BENCH_BATCH (50),
 * DATABASE_URL (else an embedded PostgreSQL).
 */
import pg from "pg";
import { benchNumber } from "./env";
import { RAW_INSERT, RAW_TABLE } from "./raw-insert";
import { benchDatabase, benchEffects, countRoundTrips, machine, runFor } from "./support";

const SECONDS = benchNumber("BENCH_SECONDS", 4);
const CONCURRENCY = benchNumber("BENCH_CONCURRENCY", 16, { integer: true });
const BATCH = benchNumber("BENCH_BATCH", 50, { integer: true });
/** Claims per block in the one-call-in-flight latency phase (four blocks each way). */
const LONE_CALLS = benchNumber("BENCH_LONE_CALLS", 500, { integer: true });
const log = (line: string) => console.log(`[bench:claims] ${line}`);

/**
 * The claim as the database exposes it (the SQL function the library calls, with the library's
 * argument order): measured straight through the pool, it is the SQL's share of a claim's cost.
 * Written out here rather than imported, because bench/ goes through public interfaces only.
 */
const CLAIM_FUNCTION_SQL = `SELECT result, status, attempt, owner, policy, created_at, lease_until, outcome, error, gap_seconds,
       duplicate_count, first_message_id, db_now
  FROM onceboard_claim($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text,
                       $8::int, $9::int, $10::boolean, $11::boolean)`;

// Not a claim (no lock, no look into older partitions): the floor any design on the partitioned
// effects table pays — tuple routing and four indexes per partition. Printed for context.
const BARE_EFFECTS_INSERT = {
  name: "bench_bare_effects_insert",
  text: `INSERT INTO effects (tenant_id, key, job_type, status, policy, owner, lease_until, first_message_id, last_message_id)
         VALUES ($1, $2, 'bench', 'in_progress', 'once', $3, now() + interval '30 seconds', $4, $4)
         ON CONFLICT DO NOTHING RETURNING key`,
};

async function main() {
  log(`machine: ${machine()}; concurrency ${CONCURRENCY}, ${SECONDS}s per phase`);
  const database = await benchDatabase(log);
  const pool = new pg.Pool({ connectionString: database.sqlUrl, max: CONCURRENCY });
  pool.on("error", () => {});
  const trips = countRoundTrips(pool);
  const effects = benchEffects(pool);
  // The same library with coalescing off: each claim and completion its own round trip (before).
  const uncoalesced = benchEffects(pool, { coalesce: false });
  try {
    await pool.query(RAW_TABLE);
    let seq = 0;
    const rawFresh = (w: number, i: number) =>
      pool.query({ ...RAW_INSERT, values: ["bench", `fresh:${seq}-${w}-${i}`, `o${w}`, `m${i}`] });
    const freshWith = (lib: typeof effects, tag: string) => async (w: number, i: number) => {
      const r = await lib.claim({ tenant: "bench", key: `fresh:${tag}${seq}-${w}-${i}`, jobType: "bench", messageId: `m${i}` });
      if (r.kind !== "owned") throw new Error(`expected a fresh claim, got ${r.kind}`);
    };
    const libFresh = freshWith(effects, "");
    const offFresh = freshWith(uncoalesced, "off-");

    log("warming up");
    seq = 0;
    await runFor(CONCURRENCY, 1, rawFresh);
    await runFor(CONCURRENCY, 1, libFresh);

    // Alternate raw and library twice so drift (autovacuum, checkpoints) hits both.
    const fresh = {
      raw: { ops: 0, s: 0 },
      lib: { ops: 0, s: 0, trips: 0 },
      off: { ops: 0, s: 0, trips: 0 },
      bare: { ops: 0, s: 0 },
      sql: { ops: 0, s: 0 },
    };
    for (let round = 1; round <= 2; round++) {
      seq = round;
      const raw = await runFor(CONCURRENCY, SECONDS, rawFresh);
      fresh.raw.ops += raw.ops;
      fresh.raw.s += raw.ops / raw.perSecond;
      log(`fresh round ${round}: raw ${raw.perSecond.toFixed(0)}/s`);
      const before = trips.count();
      const lib = await runFor(CONCURRENCY, SECONDS, libFresh);
      fresh.lib.ops += lib.ops;
      fresh.lib.s += lib.ops / lib.perSecond;
      fresh.lib.trips += trips.count() - before;
      log(`fresh round ${round}: library ${lib.perSecond.toFixed(0)}/s`);
      const offBefore = trips.count();
      const off = await runFor(CONCURRENCY, SECONDS, offFresh);
      fresh.off.ops += off.ops;
      fresh.off.s += off.ops / off.perSecond;
      fresh.off.trips += trips.count() - offBefore;
      log(`fresh round ${round}: library with coalescing off ${off.perSecond.toFixed(0)}/s`);
      const bare = await runFor(CONCURRENCY, SECONDS, (w, i) =>
        pool.query({ ...BARE_EFFECTS_INSERT, values: ["bench-bare", `fresh:${seq}-${w}-${i}`, `o${w}`, `m${i}`] }),
      );
      fresh.bare.ops += bare.ops;
      fresh.bare.s += bare.ops / bare.perSecond;
      log(`fresh round ${round}: bare INSERT into partitioned effects (not a claim) ${bare.perSecond.toFixed(0)}/s`);
      // The library's own claim statement sent straight through the pool: the SQL's share of the
      // cost, without the library's JavaScript (validation, metrics, rollups, result mapping).
      const sqlOnly = await runFor(CONCURRENCY, SECONDS, (w, i) =>
        pool.query({
          name: "bench_onceboard_claim",
          text: CLAIM_FUNCTION_SQL,
          values: [
            "bench-sql",
            `fresh:${seq}-${w}-${i}`,
            "bench",
            "once",
            `bench-sql:${seq}-${w}-${i}`,
            `m${i}`,
            null,
            30_000,
            10_000,
            false,
            false,
          ],
        }),
      );
      fresh.sql.ops += sqlOnly.ops;
      fresh.sql.s += sqlOnly.ops / sqlOnly.perSecond;
      log(
        `fresh round ${round}: onceboard_claim() alone through the pool (no library JavaScript) ${sqlOnly.perSecond.toFixed(0)}/s`,
      );
    }
    const barePerS = fresh.bare.ops / fresh.bare.s;
    const sqlPerS = fresh.sql.ops / fresh.sql.s;
    const rawPerS = fresh.raw.ops / fresh.raw.s;
    const libPerS = fresh.lib.ops / fresh.lib.s;
    const freshTrips = fresh.lib.trips / fresh.lib.ops;
    const offPerS = fresh.off.ops / fresh.off.s;
    log(`fresh: library ${libPerS.toFixed(0)}/s, raw ${rawPerS.toFixed(0)}/s, ${freshTrips.toFixed(3)} round trips per claim`);
    log(
      `fresh, coalescing off: ${offPerS.toFixed(0)}/s, ${(fresh.off.trips / fresh.off.ops).toFixed(3)} round trips per claim; coalesced/off ${(libPerS / offPerS).toFixed(3)}`,
    );

    // One call in flight: nothing to coalesce, so coalescing must cost a lone call nothing.
    // Alternating blocks of LONE_CALLS claims, coalescing on and off; p50 and p99 of each.
    const lone = { on: [] as number[], off: [] as number[] };
    for (let i = 0; i < LONE_CALLS * 4; i++) {
      // Alternated call by call (the order swapped each time), so drift hits both alike.
      const order = i % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const);
      for (const name of order) {
        const lib = name === "on" ? effects : uncoalesced;
        const started = performance.now();
        await lib.claim({ tenant: "bench", key: `lone:${name}-${i}`, jobType: "bench" });
        lone[name].push(performance.now() - started);
      }
    }
    const pct = (xs: number[], p: number) => {
      const sorted = [...xs].sort((a, b) => a - b);
      return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
    };
    const lonePct = { p50: pct(lone.on, 50), p99: pct(lone.on, 99), p50Off: pct(lone.off, 50), p99Off: pct(lone.off, 99) };
    log(
      `one call in flight: coalescing on p50 ${lonePct.p50.toFixed(3)} ms p99 ${lonePct.p99.toFixed(3)} ms; off p50 ${lonePct.p50Off.toFixed(3)} ms p99 ${lonePct.p99Off.toFixed(3)} ms`,
    );
    log(
      `context: a bare INSERT into the partitioned effects table runs at ${barePerS.toFixed(0)}/s = ${(barePerS / rawPerS).toFixed(3)} of raw; the library claim is ${(libPerS / barePerS).toFixed(3)} of that`,
    );
    log(
      `context: onceboard_claim() alone through the pool runs at ${sqlPerS.toFixed(0)}/s = ${(sqlPerS / rawPerS).toFixed(3)} of raw; the library's JavaScript keeps ${(libPerS / sqlPerS).toFixed(3)} of that`,
    );

    // Batched claims: effects.claimMany of BATCH fresh keys per call, fewer callers so the pool's
    // connections are not all holding a batch's locks at once. Alternated with raw single inserts.
    const batch = { raw: { ops: 0, s: 0 }, lib: { ops: 0, s: 0, trips: 0, calls: 0 } };
    const batchConcurrency = Math.max(1, Math.floor(CONCURRENCY / 4));
    for (let round = 1; round <= 2; round++) {
      seq = 20 + round;
      const raw = await runFor(CONCURRENCY, SECONDS, rawFresh);
      batch.raw.ops += raw.ops;
      batch.raw.s += raw.ops / raw.perSecond;
      const before = trips.count();
      const lib = await runFor(batchConcurrency, SECONDS, async (w, i) => {
        const answers = await effects.claimMany(
          Array.from({ length: BATCH }, (_, k) => ({ tenant: "bench", key: `batch:${seq}-${w}-${i}-${k}`, jobType: "bench" })),
        );
        if (answers.some((a) => a.kind !== "owned")) throw new Error("expected fresh claims in the batch");
      });
      batch.lib.ops += lib.ops * BATCH;
      batch.lib.s += lib.ops / lib.perSecond;
      batch.lib.calls += lib.ops;
      batch.lib.trips += trips.count() - before;
      log(
        `batch round ${round}: raw single inserts ${raw.perSecond.toFixed(0)}/s, batched claims ${(lib.perSecond * BATCH).toFixed(0)}/s (${BATCH} per call, ${batchConcurrency} callers)`,
      );
    }
    const batchPerS = batch.lib.ops / batch.lib.s;
    const batchRawPerS = batch.raw.ops / batch.raw.s;
    const tripsPerBatch = batch.lib.trips / batch.lib.calls;
    log(
      `batched: ${batchPerS.toFixed(0)} claims/s vs raw ${batchRawPerS.toFixed(0)} single inserts/s, ${tripsPerBatch.toFixed(3)} round trips per batch`,
    );

    // once(): claim + step + completion, coalescing on and off alternated, for reference.
    const onceRate = { on: { ops: 0, s: 0, trips: 0 }, off: { ops: 0, s: 0, trips: 0 } };
    for (let round = 1; round <= 2; round++) {
      for (const [name, lib] of [
        ["on", effects],
        ["off", uncoalesced],
      ] as const) {
        const before = trips.count();
        const r = await runFor(CONCURRENCY, SECONDS, (w, i) =>
          lib.once({ tenant: "bench", key: `once:${name}${round}-${w}-${i}`, jobType: "bench", messageId: `m${i}` }, () => ({
            ok: true,
          })),
        );
        onceRate[name].ops += r.ops;
        onceRate[name].s += r.ops / r.perSecond;
        onceRate[name].trips += trips.count() - before;
      }
    }
    const oncePerS = onceRate.on.ops / onceRate.on.s;
    const onceOffPerS = onceRate.off.ops / onceRate.off.s;
    log(
      `once() (claim + completion): coalesced ${oncePerS.toFixed(0)}/s (${(onceRate.on.trips / onceRate.on.ops).toFixed(3)} round trips each), off ${onceOffPerS.toFixed(0)}/s (${(onceRate.off.trips / onceRate.off.ops).toFixed(3)})`,
    );

    // Duplicates: completed keys for the library, existing keys for raw.
    const KEYS = 4000;
    log(`preparing ${KEYS} completed effects for the duplicate phase`);
    const dupKey = (w: number, i: number) => `dup:${(w * 7919 + i) % KEYS}`;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, w) => {
        for (let k = w; k < KEYS; k += CONCURRENCY) {
          await effects.once({ tenant: "bench", key: `dup:${k}`, jobType: "bench" }, () => ({ chargeId: `ch_${k}` }));
          await pool.query({ ...RAW_INSERT, values: ["bench", `dup:${k}`, "o", "m"] });
        }
      }),
    );
    const dup = { raw: { ops: 0, s: 0 }, lib: { ops: 0, s: 0, trips: 0 } };
    for (let round = 1; round <= 2; round++) {
      const raw = await runFor(CONCURRENCY, SECONDS, async (w, i) => {
        const r = await pool.query({ ...RAW_INSERT, values: ["bench", dupKey(w, i), "o", "m"] });
        if (r.rowCount !== 0) throw new Error("raw duplicate inserted");
      });
      dup.raw.ops += raw.ops;
      dup.raw.s += raw.ops / raw.perSecond;
      log(`duplicate round ${round}: raw ${raw.perSecond.toFixed(0)}/s`);
      const before = trips.count();
      const lib = await runFor(CONCURRENCY, SECONDS, async (w, i) => {
        const r = await effects.once({ tenant: "bench", key: dupKey(w, i), jobType: "bench", attempt: 2 }, () => {
          throw new Error("a duplicate ran");
        });
        if (!r.duplicate) throw new Error("expected a duplicate");
      });
      dup.lib.ops += lib.ops;
      dup.lib.s += lib.ops / lib.perSecond;
      dup.lib.trips += trips.count() - before;
      log(`duplicate round ${round}: library ${lib.perSecond.toFixed(0)}/s`);
    }
    const dupRaw = dup.raw.ops / dup.raw.s;
    const dupLib = dup.lib.ops / dup.lib.s;
    const dupTrips = dup.lib.trips / dup.lib.ops;
    log(
      `duplicates: library ${dupLib.toFixed(0)}/s, raw ${dupRaw.toFixed(0)}/s, ${dupTrips.toFixed(3)} round trips per duplicate`,
    );
    log(`PostgreSQL ${database.serverVersion} (${database.where})`);

    await effects.close();
    await uncoalesced.close();
    const roundTrips = (fresh.lib.trips + dup.lib.trips) / (fresh.lib.ops + dup.lib.ops);
    console.log(
      `claims ratio=${(libPerS / rawPerS).toFixed(3)} duplicate_ratio=${(dupLib / dupRaw).toFixed(3)} batch_ratio=${(batchPerS / batchRawPerS).toFixed(3)} round_trips_per_claim=${roundTrips.toFixed(3)} round_trips_per_batch=${tripsPerBatch.toFixed(3)} library_per_s=${libPerS.toFixed(0)} raw_per_s=${rawPerS.toFixed(0)} batch_per_s=${batchPerS.toFixed(0)} duplicate_per_s=${dupLib.toFixed(0)} raw_duplicate_per_s=${dupRaw.toFixed(0)} uncoalesced_per_s=${offPerS.toFixed(0)} once_per_s=${oncePerS.toFixed(0)} once_uncoalesced_per_s=${onceOffPerS.toFixed(0)} lone_p50_ms=${lonePct.p50.toFixed(3)} lone_p99_ms=${lonePct.p99.toFixed(3)} lone_p50_off_ms=${lonePct.p50Off.toFixed(3)} lone_p99_off_ms=${lonePct.p99Off.toFixed(3)}`,
    );
  } finally {
    await pool.end().catch(() => {});
    await database.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
