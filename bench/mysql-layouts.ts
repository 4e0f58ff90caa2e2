/**
 * npm run bench:mysql-layouts — the measurement behind the MySQL/MariaDB store's table layout
 * (docs/benchmarks.md, "Which layout on MySQL and MariaDB"). InnoDB refuses a unique key that does not
 * hold every column of the partitioning expression (error 1503), so a day-partitioned effects table
 * cannot catch a duplicate across days by itself. Two layouts, same columns, same claim logic
 * (a stored procedure: lock the key, read it back, insert or answer), raw SQL without the library:
 *
 *   A "one table": effects unpartitioned, PRIMARY KEY (tenant_id, key); retention deletes old rows
 *     in batches (DELETE … ORDER BY created_at LIMIT n, each its own transaction).
 *   C "key guard": effect_keys (tenant_id, key, created_at) unpartitioned holds the uniqueness and
 *     serialises claimers; effects is day-partitioned, PRIMARY KEY (tenant_id, key, created_at);
 *     retention drops a partition and deletes the guard rows in batches.
 *
 * Phases, per layout: fresh claims (+ completion) per second; duplicates per second; then one old
 * day of rows (BENCH_OLD_ROWS) is expired while the same fresh-claim load runs, reporting how long
 * the retention took and the claims per second and p99 latency during it, against the phase before.
 * Env: MARIADB_URL (default mysql://root@127.0.0.1:3306), BENCH_SECONDS (5), BENCH_CONCURRENCY (8),
 * BENCH_OLD_ROWS (300000), BENCH_OUTCOME_BYTES (200), BENCH_DELETE_BATCH (5000).
 */
import os from "node:os";
import mysql from "mysql2/promise";
import { createMysqlScratchDatabase } from "../lib/db/scratch";
import { benchNumber } from "./env";
import { machine, percentile } from "./support";

const URL_ = process.env.MARIADB_URL || "mysql://root@127.0.0.1:3306";
const SECONDS = benchNumber("BENCH_SECONDS", 5);
const CONCURRENCY = benchNumber("BENCH_CONCURRENCY", 8, { integer: true });
const OLD_ROWS = benchNumber("BENCH_OLD_ROWS", 300_000, { integer: true });
const OUTCOME_BYTES = benchNumber("BENCH_OUTCOME_BYTES", 200, { integer: true });
const DELETE_BATCH = benchNumber("BENCH_DELETE_BATCH", 5000, { integer: true });
const log = (line: string) => console.log(`[bench:mysql-layouts] ${line}`);

const COLUMNS = `tenant_id VARCHAR(255) NOT NULL, \`key\` VARCHAR(255) NOT NULL, job_type VARCHAR(255) NOT NULL,
  status VARCHAR(16) NOT NULL, policy VARCHAR(16) NOT NULL, attempt INT NOT NULL DEFAULT 1, owner VARCHAR(255),
  lease_until DATETIME(3), first_message_id VARCHAR(255), last_message_id VARCHAR(255), request_hash VARCHAR(64),
  outcome LONGTEXT, error TEXT, created_at DATETIME(3) NOT NULL, updated_at DATETIME(3) NOT NULL, completed_at DATETIME(3),
  duplicate_count INT NOT NULL DEFAULT 0, last_duplicate_at DATETIME(3), max_gap_seconds DOUBLE, marked BOOLEAN NOT NULL DEFAULT 0`;

const day = (offset: number) => new Date(Math.floor(Date.now() / 86_400_000 + offset) * 86_400_000);
const sqlDay = (d: Date) => d.toISOString().slice(0, 10);

function partitions(): string {
  const parts: string[] = [];
  for (let k = -12; k <= 3; k++) {
    const from = day(k);
    parts.push(`PARTITION p${sqlDay(from).replaceAll("-", "")} VALUES LESS THAN ('${sqlDay(day(k + 1))}')`);
  }
  return parts.join(",\n  ");
}

const INSERT_NEW = `INSERT INTO effects (tenant_id, \`key\`, job_type, status, policy, attempt, owner, lease_until,
      first_message_id, last_message_id, created_at, updated_at)
    VALUES (p_tenant, p_key, 'bench', 'in_progress', 'external', 1, p_owner, v_ts + INTERVAL 30 SECOND, 'm', 'm', v_ts, v_ts)`;

// The two layouts' DDL and claim procedures. Both answer 1 (this call owns it) or 0 (someone else's).
const LAYOUTS = {
  A: [
    `CREATE TABLE effects (${COLUMNS}, PRIMARY KEY (tenant_id, \`key\`), KEY effects_created_at (created_at),
       KEY effects_in_progress (status, lease_until), KEY effects_tenant_created (tenant_id, created_at)) ENGINE=InnoDB`,
    `CREATE PROCEDURE bench_claim(p_tenant VARCHAR(255), p_key VARCHAR(255), p_owner VARCHAR(255))
     BEGIN
       DECLARE v_ts DATETIME(3) DEFAULT UTC_TIMESTAMP(3);
       DECLARE v_owner VARCHAR(255);
       DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
       SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
       START TRANSACTION;
       ${INSERT_NEW} ON DUPLICATE KEY UPDATE updated_at = updated_at;
       SELECT owner INTO v_owner FROM effects WHERE tenant_id = p_tenant AND \`key\` = p_key FOR UPDATE;
       COMMIT;
       SELECT v_owner = p_owner AS owned;
     END`,
  ],
  C: [
    `CREATE TABLE effect_keys (tenant_id VARCHAR(255) NOT NULL, \`key\` VARCHAR(255) NOT NULL, created_at DATETIME(3) NOT NULL,
       PRIMARY KEY (tenant_id, \`key\`), KEY effect_keys_created_at (created_at)) ENGINE=InnoDB`,
    `CREATE TABLE effects (${COLUMNS}, PRIMARY KEY (tenant_id, \`key\`, created_at),
       KEY effects_in_progress (status, lease_until), KEY effects_tenant_created (tenant_id, created_at)) ENGINE=InnoDB
     PARTITION BY RANGE COLUMNS (created_at) (${partitions()})`,
    `CREATE PROCEDURE bench_claim(p_tenant VARCHAR(255), p_key VARCHAR(255), p_owner VARCHAR(255))
     BEGIN
       DECLARE v_ts DATETIME(3) DEFAULT UTC_TIMESTAMP(3);
       DECLARE v_created DATETIME(3);
       DECLARE v_owner VARCHAR(255) DEFAULT NULL;
       DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
       SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
       START TRANSACTION;
       INSERT INTO effect_keys (tenant_id, \`key\`, created_at) VALUES (p_tenant, p_key, v_ts)
         ON DUPLICATE KEY UPDATE created_at = created_at;
       SELECT created_at INTO v_created FROM effect_keys WHERE tenant_id = p_tenant AND \`key\` = p_key FOR UPDATE;
       BEGIN
         DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_owner = NULL;
         SELECT owner INTO v_owner FROM effects WHERE tenant_id = p_tenant AND \`key\` = p_key AND created_at = v_created FOR UPDATE;
       END;
       IF v_owner IS NULL THEN
         ${INSERT_NEW};
         SET v_owner = p_owner;
       END IF;
       COMMIT;
       SELECT v_owner = p_owner AS owned;
     END`,
  ],
} as const;

type Layout = keyof typeof LAYOUTS;

const COMPLETE = `UPDATE effects SET outcome = ?, status = 'completed', completed_at = UTC_TIMESTAMP(3), lease_until = NULL,
  updated_at = UTC_TIMESTAMP(3) WHERE tenant_id = ? AND \`key\` = ? AND owner = ? AND status = 'in_progress'`;
const DUPLICATE = `SELECT status, outcome FROM effects WHERE tenant_id = ? AND \`key\` = ? AND status IN ('completed', 'abandoned')`;

interface PhaseResult {
  perSecond: number;
  p99: number;
  ops: number;
}

/** `op` from CONCURRENCY loops until `stop()` says so (or `seconds` pass); per-op latency kept. */
async function load(op: (w: number, i: number) => Promise<void>, until: () => boolean): Promise<PhaseResult> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      for (let i = 0; !until(); i++) {
        const t = performance.now();
        await op(w, i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: latencies.length / seconds, p99: percentile(latencies, 99), ops: latencies.length };
}

const forSeconds = (s: number) => {
  const end = performance.now() + s * 1000;
  return () => performance.now() >= end;
};

async function measure(layout: Layout) {
  const scratch = await createMysqlScratchDatabase(URL_, { prefix: `ob_layout_${layout.toLowerCase()}` });
  const pool = mysql.createPool({ uri: scratch.url, connectionLimit: CONCURRENCY + 2, flags: ["-FOUND_ROWS"] });
  try {
    for (const ddl of LAYOUTS[layout]) await pool.query(ddl);
    const outcome = JSON.stringify({ chargeId: "ch_1", pad: "x".repeat(Math.max(0, OUTCOME_BYTES - 30)) });
    // One old day of completed effects, ten days back, as retention would find it.
    const old = day(-10);
    const fill = (table: string, columns: string, select: string) =>
      pool.query(`INSERT INTO ${table} (${columns}) SELECT ${select} FROM seq_1_to_${OLD_ROWS}`);
    const oldAt = `TIMESTAMP('${sqlDay(old)}') + INTERVAL seq * 86399000 DIV ${OLD_ROWS} * 1000 MICROSECOND`;
    log(`${layout}: filling ${OLD_ROWS} rows of ${sqlDay(old)}`);
    await fill(
      "effects",
      "tenant_id, `key`, job_type, status, policy, attempt, owner, created_at, updated_at, completed_at, outcome",
      `CONCAT('t', seq % 8), CONCAT('old:', seq), 'bench', 'completed', 'external', 1, 'o', ${oldAt}, ${oldAt}, ${oldAt}, '${outcome}'`,
    );
    if (layout === "C")
      await fill("effect_keys", "tenant_id, `key`, created_at", `CONCAT('t', seq % 8), CONCAT('old:', seq), ${oldAt}`);

    let seq = 0;
    const fresh = async (w: number, i: number) => {
      const tenant = `t${w % 8}`;
      const key = `fresh:${seq}-${w}-${i}`;
      const owner = `o${w}-${i}`;
      const [sets] = (await pool.query("CALL bench_claim(?, ?, ?)", [tenant, key, owner])) as unknown as [[{ owned: number }[]]];
      if (Number(sets[0]?.[0]?.owned) !== 1) throw new Error("a fresh key was not owned");
      await pool.execute(COMPLETE, [outcome, tenant, key, owner]);
    };
    const dupKeys: string[] = Array.from({ length: 1000 }, (_, k) => `old:${k + 1}`);
    const duplicate = async (w: number, i: number) => {
      const k = (w * 7919 + i) % dupKeys.length;
      const [rows] = (await pool.execute(DUPLICATE, [`t${(k + 1) % 8}`, dupKeys[k] as string])) as unknown as [unknown[]];
      if (rows.length !== 1) throw new Error("a completed key was not found");
    };

    seq = 0;
    await load(fresh, forSeconds(1)); // warm-up
    seq = 1;
    const before = await load(fresh, forSeconds(SECONDS));
    const dup = await load(duplicate, forSeconds(SECONDS));
    log(
      `${layout}: fresh ${before.perSecond.toFixed(0)}/s p99 ${before.p99.toFixed(2)} ms; duplicate ${dup.perSecond.toFixed(0)}/s`,
    );

    // Retention of the old day while the fresh-claim load runs.
    let retentionDone = false;
    let retentionMs = 0;
    const cutoff = `${sqlDay(day(-9))} 00:00:00`;
    const retention = (async () => {
      const started = performance.now();
      const conn = await pool.getConnection();
      try {
        await conn.query("SET SESSION lock_wait_timeout = 2");
        if (layout === "C") await conn.query(`ALTER TABLE effects DROP PARTITION p${sqlDay(old).replaceAll("-", "")}`);
        const table = layout === "A" ? "effects" : "effect_keys";
        for (;;) {
          const [r] = (await conn.query(`DELETE FROM ${table} WHERE created_at < ? ORDER BY created_at LIMIT ${DELETE_BATCH}`, [
            cutoff,
          ])) as unknown as [{ affectedRows: number }];
          if (r.affectedRows < DELETE_BATCH) break;
        }
      } finally {
        conn.release();
      }
      retentionMs = performance.now() - started;
      retentionDone = true;
    })();
    seq = 2;
    // At least SECONDS of load, and until the retention has finished.
    const minimum = forSeconds(SECONDS);
    const during = await load(fresh, () => retentionDone && minimum());
    await retention;
    const [[left]] = (await pool.query("SELECT COUNT(*) AS n FROM effects WHERE created_at < ?", [cutoff])) as unknown as [
      [{ n: number }],
    ];
    log(
      `${layout}: retention of ${OLD_ROWS} rows ${(retentionMs / 1000).toFixed(1)} s; fresh during it ${during.perSecond.toFixed(0)}/s p99 ${during.p99.toFixed(2)} ms (left ${left.n})`,
    );
    return { layout, before, dup, during, retentionMs };
  } finally {
    await pool.end();
    await scratch.drop();
  }
}

async function main() {
  const admin = await mysql.createConnection({ uri: URL_ });
  const [[version]] = (await admin.query("SELECT VERSION() AS v, @@log_bin AS log_bin")) as unknown as [
    [{ v: string; log_bin: number }],
  ];
  log(`${version.v} (log_bin ${version.log_bin}); ${machine()}; load ${os.loadavg()[0]?.toFixed(2)}`);
  const results: Awaited<ReturnType<typeof measure>>[] = [];
  try {
    for (const layout of ["A", "C", "A", "C"] as Layout[]) results.push(await measure(layout));
  } finally {
    await admin.end();
  }
  const avg = (layout: Layout, pick: (r: (typeof results)[number]) => number) => {
    const rs = results.filter((r) => r.layout === layout);
    return rs.reduce((s, r) => s + pick(r), 0) / rs.length;
  };
  const parts = (["A", "C"] as Layout[]).map(
    (l) =>
      `${l}: fresh_per_s=${avg(l, (r) => r.before.perSecond).toFixed(0)} duplicate_per_s=${avg(l, (r) => r.dup.perSecond).toFixed(0)} retention_s=${(avg(l, (r) => r.retentionMs) / 1000).toFixed(1)} fresh_during_retention_per_s=${avg(l, (r) => r.during.perSecond).toFixed(0)} p99_before_ms=${avg(l, (r) => r.before.p99).toFixed(2)} p99_during_ms=${avg(l, (r) => r.during.p99).toFixed(2)}`,
  );
  console.log(
    `summary: old_rows=${OLD_ROWS} concurrency=${CONCURRENCY} load_end=${os.loadavg()[0]?.toFixed(2)} ${parts.join(" | ")}`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
