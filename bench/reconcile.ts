import os from "node:os";
import pg from "pg";
import { ensureEffectPartitions } from "../lib/db/partitions";
import { consolePoolConfig } from "../lib/db/pool";
import { demoProvidersFile } from "../lib/demo/providers-file";
import { startStripeServer } from "../lib/demo/stripe-server";
import { DEFAULT_SCHEMA } from "../lib/idempotency";
import { FINDING_KINDS } from "../lib/reconciliation/finding-types";
import { parseProviders } from "../lib/reconciliation/providers";
import { reconcile } from "../lib/reconciliation/reconcile";
import { StripeAdapter, stripeClient } from "../lib/reconciliation/stripe";
import { benchNumber } from "./env";
import { SEED_JOB_TYPE, seedReconcileDays } from "./reconcile-seed";
import { benchDatabase, machine } from "./support";

/**
 * bench:reconcile — one reconciliation of a day holding N effects and about N provider objects
 * (BENCH_RECONCILE_N, default 1,000,000), read from the demo's Stripe-compatible server over HTTP
 * through the `stripe` client in pages of 100, with 0.1 % of each disagreement planted (drift,
 * duplicate, late duplicate, missing, unknown key, no key; bench/reconcile-seed.ts), beside a day
 * before it of the same size. The server runs in this process, as the demo runs it beside its
 * workers. Progress every 5 s; fails unless the findings are exactly the planted ones. Last line:
 *   reconcile objects_per_s=<n> rss_mb=<n> findings=<n>
 * objects_per_s counts the whole run (reading, staging, comparing, writing findings); rss_mb is
 * the process's peak resident set over the whole benchmark (server and reconciler together).
 */
const N = benchNumber("BENCH_RECONCILE_N", 1_000_000, { integer: true });
const KEY = "sk_test_bench_reconcile";
const PROGRESS_EVERY_MS = 5000;
const log = (line: string) => process.stdout.write(`bench:reconcile ${line}\n`);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
const peakRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

async function main() {
  if (!Number.isInteger(N) || N < 6) throw new RangeError("BENCH_RECONCILE_N must be a whole number of at least 6");
  log(`${machine()}; load ${load()}; N=${N}`);
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
    // The reconciled day is yesterday (UTC), wholly past; the day before it needs its partition too.
    const now = new Date();
    await ensureEffectPartitions(pool, { back: 2, ahead: 1, now });
    const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 1));
    const seeding = performance.now();
    log(`seeding two days of ${N} effects and ${N} provider objects (generate_series, in PostgreSQL)…`);
    const seed = await seedReconcileDays(pool, server.pool, { n: N, day });
    log(
      `seeded in ${Math.round((performance.now() - seeding) / 1000)} s: the day ${day.toISOString().slice(0, 10)} holds ${N} effects and ${seed.objectsInWindow} objects, ${seed.planted} of each disagreement planted`,
    );

    const stripe = stripeClient({
      STRIPE_API_KEY: KEY,
      STRIPE_HOST: "127.0.0.1",
      STRIPE_PORT: server.port,
      STRIPE_PROTOCOL: "http",
    });
    const [provider] = parseProviders(demoProvidersFile({ mailerUrl: "http://127.0.0.1:9/unused" }), "the demo's providers", {
      STRIPE_API_KEY: KEY,
    });
    if (!provider?.jobTypes.includes(SEED_JOB_TYPE)) throw new Error(`the stripe provider no longer holds ${SEED_JOB_TYPE}`);
    log(`reconciling (load ${load()})…`);
    const t0 = performance.now();
    let lastLog = t0;
    let staged = 0;
    const result = await reconcile({
      pool,
      adapter: new StripeAdapter(stripe),
      provider,
      window: seed.window,
      graceSeconds: 0,
      trigger: "manual",
      onProgress: ({ pages, objects }) => {
        staged = objects;
        const at = performance.now();
        if (at - lastLog < PROGRESS_EVERY_MS) return;
        lastLog = at;
        const seconds = (at - t0) / 1000;
        log(
          `  ${objects} of ${seed.objectsInWindow} objects staged, ${pages} pages (${seconds.toFixed(0)} s, ${Math.round(objects / seconds)} objects/s, peak rss ${peakRssMb()} MB, load ${load()})`,
        );
      },
    });
    const seconds = (performance.now() - t0) / 1000;
    if (result.status !== "completed") throw new Error(`run failed: ${result.error}`);
    log(`  ${staged} objects staged; compared and findings written at ${seconds.toFixed(1)} s`);
    const findings = FINDING_KINDS.reduce((sum, kind) => sum + result.counts[kind], 0);
    log(
      `matched=${result.matched} ${FINDING_KINDS.map((kind) => `${kind}=${result.counts[kind]}`).join(" ")} objects=${result.objectsSeen} in ${seconds.toFixed(1)} s (load ${load()})`,
    );
    const wrong = FINDING_KINDS.filter((kind) => result.counts[kind] !== seed.expected[kind]);
    const expectedMatched = N - 3 * seed.planted;
    if (wrong.length > 0 || result.matched !== expectedMatched || result.objectsSeen !== seed.objectsInWindow) {
      throw new Error(
        `the findings are not what was planted: expected matched=${expectedMatched} objects=${seed.objectsInWindow} ${FINDING_KINDS.map((kind) => `${kind}=${seed.expected[kind]}`).join(" ")}`,
      );
    }
    process.stdout.write(
      `reconcile objects_per_s=${Math.round(result.objectsSeen / seconds)} rss_mb=${peakRssMb()} findings=${findings}\n`,
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
