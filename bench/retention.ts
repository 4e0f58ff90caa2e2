import pg from "pg";
import pino from "pino";
import { maintain } from "../lib/idempotency/admin";
import { benchNumber } from "./env";
import { benchDatabase } from "./support";

/**
 * bench:retention — removing one day of 1,000,000 effect rows: by the partition manager
 * (DETACH … CONCURRENTLY + DROP, one maintain() run, timed whole) and by DELETE (the same rows,
 * a fresh copy in the neighbouring day's partition). Last line:
 *   retention drop_ms=<n> delete_ms=<n> ratio=<delete/drop>
 * DELETE is timed alone, without the VACUUM a delete job would also need: the ratio is a floor.
 * Both sides start from a checkpoint, and nothing else holds a transaction in the bench database
 * (checked and printed): DETACH … CONCURRENTLY would otherwise wait for it. Each statement of the
 * timed maintain() run is timed too and the slowest are printed, so a run shows where drop_ms goes.
 */
const ROWS = benchNumber("BENCH_RETENTION_ROWS", 1_000_000, { integer: true });
const DAY = 86_400_000;
const log = (line: string) => process.stdout.write(`bench:retention ${line}\n`);

type QueryFn = (...args: unknown[]) => unknown;

/**
 * Times the statements run on the pool's clients while `recording` is on (maintain() runs all of
 * its statements on one client it checks out). Callback-style calls (pool.query's own) pass through.
 */
function statementTimer(pool: pg.Pool) {
  const timings: { text: string; ms: number }[] = [];
  let recording = false;
  const wrapped = new WeakSet<object>();
  pool.on("acquire", (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as QueryFn;
    (client as unknown as { query: QueryFn }).query = (...args: unknown[]) => {
      if (!recording || typeof args[args.length - 1] === "function") return query(...args);
      const first = args[0] as string | { text?: string };
      const text = (typeof first === "string" ? first : (first?.text ?? "")).replace(/\s+/g, " ").trim();
      const started = performance.now();
      return Promise.resolve(query(...args)).finally(() => timings.push({ text, ms: performance.now() - started }));
    };
  });
  return {
    start: () => {
      timings.length = 0;
      recording = true;
    },
    stop: () => {
      recording = false;
      return [...timings];
    },
  };
}

/** Sessions of the bench database (other than ours) inside a transaction: a DETACH CONCURRENTLY waits for them. */
async function openTransactions(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ pid: number; state: string; xmin: string | null; query: string }>(
    `SELECT pid, state, backend_xmin::text AS xmin, left(query, 60) AS query FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND (xact_start IS NOT NULL OR backend_xmin IS NOT NULL)`,
  );
  return rows.length === 0 ? "none" : rows.map((r) => `pid ${r.pid} ${r.state} xmin ${r.xmin}: ${r.query}`).join("; ");
}

async function main() {
  const db = await benchDatabase(log);
  const pool = new pg.Pool({ connectionString: db.sqlUrl, max: 4 });
  const timer = statementTimer(pool);
  try {
    const today = Math.floor(Date.now() / DAY) * DAY;
    const dropDay = new Date(today - 30 * DAY);
    const deleteDay = new Date(today - 31 * DAY);
    const ymd = (d: Date) => d.toISOString().slice(0, 10);
    await pool.query("SELECT onceboard_ensure_partitions($1::date, $2::date)", [ymd(deleteDay), ymd(dropDay)]);
    await pool.query("UPDATE retention_settings SET retention_days = 7, max_retry_window_days = 3 WHERE id = 1");

    log(`seeding ${ROWS} effects in ${ymd(dropDay)} (dropped) and the same rows in ${ymd(deleteDay)} (deleted)`);
    const started = performance.now();
    const batch = 100_000;
    for (let offset = 0; offset < ROWS; offset += batch) {
      const n = Math.min(batch, ROWS - offset);
      await pool.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, first_message_id, request_hash,
                              outcome, created_at, updated_at, completed_at)
         SELECT 'tenant-' || (i % 50), 'capture:order-' || i, 'order.capture', 'completed', 'external', 1, 'bench',
                'msg-' || i, md5(i::text), jsonb_build_object('chargeId', 'ch_' || i),
                $2::timestamptz + (i % 86400) * interval '1 second', $2::timestamptz + (i % 86400) * interval '1 second',
                $2::timestamptz + (i % 86400) * interval '1 second'
           FROM generate_series($1::bigint, $1::bigint + $3 - 1) AS i`,
        [offset, dropDay, n],
      );
      log(`  seeded ${offset + n}/${ROWS} (${Math.round((performance.now() - started) / 1000)}s)`);
    }
    log("copying them one day earlier (the DELETE's fresh copy)");
    await pool.query(
      `INSERT INTO effects SELECT * FROM effects WHERE created_at >= $1 AND created_at < $2`.replace(
        "SELECT *",
        `SELECT tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id, last_message_id,
                request_hash, outcome, error, created_at - interval '1 day', updated_at, completed_at, duplicate_count,
                last_duplicate_at, max_gap_seconds, demo`,
      ),
      [dropDay, new Date(dropDay.getTime() + DAY)],
    );
    await pool.query("ANALYZE effects");
    await pool.query("CHECKPOINT").catch(() => {}); // not superuser: fine

    log(`DELETE of ${ymd(deleteDay)}`);
    let t = performance.now();
    const deleted = await pool.query("DELETE FROM effects WHERE created_at >= $1 AND created_at < $2", [
      deleteDay,
      new Date(deleteDay.getTime() + DAY),
    ]);
    const deleteMs = performance.now() - t;
    log(`  deleted ${deleted.rowCount} rows in ${Math.round(deleteMs)} ms`);
    const emptied = `effects_p${ymd(deleteDay).replaceAll("-", "")}`;
    // Not in delete_ms (the ratio stays a floor), but a delete job pays it to get the space back.
    t = performance.now();
    await pool.query(`VACUUM ${emptied}`);
    log(`  VACUUM of the deleted rows, not counted: ${Math.round(performance.now() - t)} ms more`);
    // Out of the way, untimed: the emptied partition would otherwise be dropped by the run below too.
    await pool.query(`ALTER TABLE effects DETACH PARTITION ${emptied}`);
    await pool.query(`DROP TABLE ${emptied}`);

    // The DELETE started from a checkpoint; so does the drop (the DELETE's WAL would otherwise
    // bring the next one into the timed run).
    await pool.query("CHECKPOINT").catch(() => {});
    log(`open transactions in the bench database before maintain(): ${await openTransactions(pool)}`);

    log(`maintain(): detach concurrently + drop ${ymd(dropDay)}`);
    timer.start();
    t = performance.now();
    const run = await maintain(pool, { logger: pino({ level: "silent" }), trigger: "bench" });
    const dropMs = performance.now() - t;
    const statements = timer.stop();
    const drops = run.operations.filter((o) => o.kind === "drop" && o.result === "ok");
    if (run.result !== "success" || drops.length !== 1) {
      throw new Error(`expected one drop, got ${JSON.stringify(run.operations)} (${run.error ?? run.result})`);
    }
    log(`  ${run.operations.map((o) => `${o.kind} ${o.partition}`).join(", ")} in ${Math.round(dropMs)} ms`);
    const inStatements = statements.reduce((sum, s) => sum + s.ms, 0);
    log(`  ${statements.length} statements, ${inStatements.toFixed(1)} ms of them; the slowest:`);
    for (const s of [...statements].sort((a, b) => b.ms - a.ms).slice(0, 6)) {
      log(`    ${s.ms.toFixed(1).padStart(7)} ms  ${s.text.slice(0, 100)}`);
    }
    log(`PostgreSQL ${db.serverVersion} (${db.where}), ${ROWS} rows per day`);
    process.stdout.write(
      `retention drop_ms=${Math.round(dropMs)} delete_ms=${Math.round(deleteMs)} ratio=${(deleteMs / dropMs).toFixed(1)}\n`,
    );
  } finally {
    await pool.end();
    await db.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
