/**
 * `npm run bench:citus-console`: what the console's reads across tenants cost on a Citus cluster
 * against one PostgreSQL, in one run. The same workload on both — the console tests' seeds
 * (test/citus-database.ts: tenants acme, globex, initech on both workers) plus BENCH_CITUS_EFFECTS
 * completed effects over BENCH_CITUS_TENANTS tenants in the last three days — and the same routes,
 * called in-process as the console serves them (withAuth, the read models, the JSON out; no build):
 * the Overview (24 h and 7 d, every tenant), the Keys search across tenants and in one tenant, the
 * gaps page across tenants, the violations list across tenants and the retention plan. Each route
 * BENCH_CITUS_READS times after one warm-up read; median and p95 per route and database.
 * Last line: `citus_console <route>_ms=<one server median>/<Citus median> …`.
 * Env: CITUS_URL (required: a coordinator with registered workers), DATABASE_URL (else an embedded
 * PostgreSQL), BENCH_CITUS_READS (20), BENCH_CITUS_EFFECTS (20000), BENCH_CITUS_TENANTS (200).
 */
import os from "node:os";
import pg from "pg";
import { consolePoolConfig } from "../lib/db/pool";
import { call } from "../test/api/harness";
import { createCitusConsoleDatabase, PARTITIONS_BACK, pointConsoleAt, seedConsoleWorkload } from "../test/citus-database";
import { benchNumber } from "./env";
import { benchDatabase, machine, percentile } from "./support";

const READS = benchNumber("BENCH_CITUS_READS", 20, { integer: true });
const EFFECTS = benchNumber("BENCH_CITUS_EFFECTS", 20_000, { integer: true });
const TENANTS = benchNumber("BENCH_CITUS_TENANTS", 200, { integer: true });
const log = (line: string) => console.log(`[bench:citus-console] ${line}`);

/** The routes measured, by the name in the last line. All as a platform admin: every tenant. */
const ROUTES: [name: string, path: string][] = [
  ["overview_24h", "/api/v1/overview"],
  ["overview_7d", "/api/v1/overview?window=7d"],
  ["keys_search_all_tenants", "/api/v1/effects?q=capture"],
  ["keys_search_one_tenant", "/api/v1/effects?q=capture&tenant=acme"],
  ["gaps_all_tenants", "/api/v1/gaps"],
  ["violations_all_tenants", "/api/v1/violations"],
  ["retention_plan", "/api/v1/retention/plan"],
];

/** Completed effects of many tenants over the last three days, some with duplicates and gaps. */
async function seedBulk(pool: pg.Pool): Promise<void> {
  await pool.query(
    `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, first_message_id, last_message_id, outcome,
                          created_at, updated_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds)
     SELECT 'bulk-' || (i % $2::int), 'capture:bulk-' || i, 'capture-payment', 'completed', 'once', 1, 'm' || i, 'm' || i,
            '{"ok":true}', t, t, t, (i % 3), CASE WHEN i % 3 > 0 THEN t + interval '40 seconds' END,
            CASE WHEN i % 3 > 0 THEN 40 + (i % 5000) END
       FROM generate_series(1, $1::int) i, LATERAL (SELECT date_trunc('milliseconds', now()) - (i % 259200) * interval '1 second' AS t) x`,
    [EFFECTS, TENANTS],
  );
  await pool.query("ANALYZE effects");
}

async function timeRoutes(token: string): Promise<Map<string, number[]>> {
  const times = new Map<string, number[]>();
  const as = { authorization: `Bearer ${token}` };
  for (const [name, path] of ROUTES) {
    const warm = await call("GET", path, as);
    if (warm.status !== 200) throw new Error(`${path} answered ${warm.status}: ${warm.text}`);
    const ms: number[] = [];
    for (let i = 0; i < READS; i++) {
      const started = performance.now();
      const response = await call("GET", path, as);
      ms.push(performance.now() - started);
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${response.text}`);
    }
    times.set(name, ms);
  }
  return times;
}

async function main() {
  const citusUrl = process.env.CITUS_URL?.trim();
  if (!citusUrl) {
    process.stderr.write("bench:citus-console: set CITUS_URL to a Citus coordinator with registered workers\n");
    process.exit(2);
  }
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  log(`machine: ${machine()}; load average ${load}; ${READS} reads per route; ${EFFECTS} effects over ${TENANTS} tenants`);
  process.env.ONCEBOARD_SECRET ??= "b".repeat(40);
  process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
  process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
  const now = new Date();
  const results: { where: string; times: Map<string, number[]> }[] = [];

  const one = await benchDatabase(log);
  const citus = await createCitusConsoleDatabase(citusUrl, { back: PARTITIONS_BACK });
  log(`Citus database ${citus.name} made on the coordinator and ${citus.workerPorts.length} workers`);
  try {
    for (const [where, url] of [
      ["one server", one.url],
      ["Citus", citus.url],
    ] as const) {
      const pool = new pg.Pool(
        consolePoolConfig({
          connectionString: url,
          schema: "onceboard",
          statementTimeoutMs: null,
          max: 4,
          application_name: "onceboard-bench",
        }),
      );
      pool.on("error", () => {});
      try {
        await pointConsoleAt(url);
        const { platform } = await seedConsoleWorkload(pool, now);
        await seedBulk(pool);
        log(`${where}: seeded`);
        const times = await timeRoutes(platform);
        for (const [name, ms] of times) {
          log(`${where}: ${name} median ${percentile(ms, 50).toFixed(1)} ms, p95 ${percentile(ms, 95).toFixed(1)} ms`);
        }
        results.push({ where, times });
      } finally {
        await pool.end();
      }
    }
  } finally {
    await pointConsoleAt("postgresql://closed.invalid/none");
    await citus.drop();
    await one.close();
  }
  const [plain, distributed] = results;
  const pairs = ROUTES.map(([name]) => {
    const a = percentile(plain?.times.get(name) ?? [], 50);
    const b = percentile(distributed?.times.get(name) ?? [], 50);
    return `${name}_ms=${a.toFixed(1)}/${b.toFixed(1)}`;
  });
  console.log(`citus_console ${pairs.join(" ")}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
