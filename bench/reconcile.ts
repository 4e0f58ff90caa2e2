import os from "node:os";
import pg from "pg";
import { consolePoolConfig } from "../lib/db/pool";
import { seedProviderObjects, startStripeServer } from "../lib/demo/stripe-server";
import { DEFAULT_SCHEMA } from "../lib/idempotency";
import { reconcileProvider } from "../lib/reconciliation/providers";
import { reconcile } from "../lib/reconciliation/reconcile";
import { StripeAdapter, stripeClient } from "../lib/reconciliation/stripe";
import { benchDatabase, machine } from "./support";

/**
 * bench:reconcile — one reconciliation of a window holding N effects and N provider objects
 * (BENCH_RECONCILE_N, default 1,000,000), read from the demo's Stripe-compatible server over HTTP
 * through the `stripe` client in pages of 100, with 0.1 % of each disagreement planted (duplicate,
 * missing, unknown, drift). Last line:
 *   reconcile objects_per_s=<n> rss_mb=<n> findings=<n>
 * rss_mb is the process's peak resident set: it should not grow with N (one page in memory).
 */
const N = Number(process.env.BENCH_RECONCILE_N ?? 1_000_000);
const KEY = "sk_test_bench_reconcile";
const log = (line: string) => process.stdout.write(`bench:reconcile ${line}\n`);

async function main() {
  log(
    `${machine()}; load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}; N=${N}`,
  );
  const db = await benchDatabase(log);
  const pool = new pg.Pool(
    consolePoolConfig({
      connectionString: db.url,
      schema: DEFAULT_SCHEMA,
      statementTimeoutMs: null,
      max: 4,
      application_name: "bench-reconcile",
    }),
  );
  const server = await startStripeServer({ databaseUrl: db.url, apiKeys: [KEY] });
  try {
    const planted = Math.max(1, Math.round(N / 1000));
    const created = Math.floor(Date.now() / 1000) - 600;
    const started = performance.now();
    // Effects 1..N; the last `planted` of them have no object (missing).
    await pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, outcome, created_at, completed_at)
       SELECT 'acme', 'capture:bench-' || i, 'order.capture', 'completed', 'external',
              jsonb_build_object('provider_object_id', 'pi_bench_' || i, 'amount', 100, 'currency', 'usd', 'status', 'succeeded'),
              to_timestamp($2) , to_timestamp($2)
         FROM generate_series(1, $1) AS i`,
      [N, created],
    );
    const batch = 50_000;
    for (let start = 1; start <= N; start += batch) {
      const objects = [];
      for (let i = start; i < Math.min(start + batch, N + 1); i++) {
        if (i > N - planted) continue; // missing
        const drift = i <= planted;
        objects.push({
          id: `pi_bench_${i}`,
          amount: drift ? 101 : 100,
          created,
          metadata: { onceboard_key: `capture:bench-${i}`, onceboard_tenant: "acme" },
        });
        if (i > planted && i <= 2 * planted) {
          objects.push({
            id: `pi_bench_dup_${i}`,
            amount: 100,
            created,
            metadata: { onceboard_key: `capture:bench-${i}`, onceboard_tenant: "acme" },
          });
        }
      }
      if (start === 1) {
        for (let u = 0; u < planted; u++) {
          objects.push({
            id: `pi_bench_unknown_${u}`,
            amount: 100,
            created,
            metadata: { onceboard_key: `capture:ghost-${u}`, onceboard_tenant: "acme" },
          });
        }
      }
      await seedProviderObjects(server.pool, objects);
    }
    log(
      `seeded ${N} effects and ${N - planted + 2 * planted} provider objects in ${Math.round((performance.now() - started) / 1000)} s`,
    );
    await server.pool.query("ANALYZE onceboard_demo_provider.objects");
    await pool.query("ANALYZE effects");

    const stripe = stripeClient({
      STRIPE_API_KEY: KEY,
      STRIPE_HOST: "127.0.0.1",
      STRIPE_PORT: server.port,
      STRIPE_PROTOCOL: "http",
    });
    const provider = reconcileProvider(
      { STRIPE_API_KEY: KEY, STRIPE_KEY_WINDOW_HOURS: 24, MAILER_RECONCILE_URL: undefined },
      "stripe",
    )!;
    let peakRss = process.memoryUsage().rss;
    const t0 = performance.now();
    const result = await reconcile({
      pool,
      adapter: new StripeAdapter(stripe),
      provider,
      window: { from: new Date((created - 60) * 1000), to: new Date((created + 60) * 1000) },
      graceSeconds: 0,
      trigger: "manual",
      onProgress: ({ pages, objects }) => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
        if (pages % 1000 === 0)
          log(
            `  ${objects} objects staged (${Math.round((performance.now() - t0) / 1000)} s, rss ${Math.round(peakRss / 1e6)} MB)`,
          );
      },
    });
    const seconds = (performance.now() - t0) / 1000;
    if (result.status !== "completed") throw new Error(`run failed: ${result.error}`);
    const findings = Object.values(result.counts).reduce((a, b) => a + b, 0);
    log(
      `matched=${result.matched} ${Object.entries(result.counts)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")} in ${seconds.toFixed(1)} s`,
    );
    process.stdout.write(
      `reconcile objects_per_s=${Math.round(result.objectsSeen / seconds)} rss_mb=${Math.round(peakRss / 1e6)} findings=${findings}\n`,
    );
  } finally {
    await server.close();
    await pool.end();
    await db.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
