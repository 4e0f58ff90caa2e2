import type pg from "pg";
import { Counter, Gauge, type Registry } from "prom-client";
import { FINDING_KINDS } from "./reconcile";

interface ReconcileMetrics {
  runs: Counter<"provider" | "status">;
}

const registered = new WeakMap<Registry, ReconcileMetrics>();

/**
 * The reconciler's metrics on a registry (the console's, GET /api/metrics): runs by provider and
 * outcome, and open findings per provider and kind, read from the database at each scrape so that
 * every console process reports the same numbers. The alerts in deploy/ page on
 * duplicated_at_provider and open a ticket for the other kinds and for failed runs.
 */
export function reconcileMetrics(registry: Registry, pool: pg.Pool, providers: string[]): ReconcileMetrics {
  const existing = registered.get(registry);
  if (existing) return existing;
  const runs = new Counter({
    name: "onceboard_reconcile_runs_total",
    help: "Reconciliation runs by provider and outcome (completed, failed, busy: another run held the window).",
    labelNames: ["provider", "status"],
    registers: [registry],
  });
  new Gauge({
    name: "onceboard_reconcile_open_findings",
    help: "Open reconciliation findings by provider and kind.",
    labelNames: ["provider", "kind"],
    registers: [registry],
    async collect() {
      const { rows } = await pool.query<{ provider: string; kind: string; n: number }>(
        "SELECT provider, kind, count(*)::int AS n FROM reconciliation_findings WHERE state = 'open' GROUP BY provider, kind",
      );
      this.reset();
      for (const provider of providers) for (const kind of FINDING_KINDS) this.set({ provider, kind }, 0);
      for (const row of rows) this.set({ provider: row.provider, kind: row.kind }, row.n);
    },
  });
  new Gauge({
    name: "onceboard_reconcile_last_completed_timestamp_seconds",
    help: "When a reconciliation run of the provider last completed (Unix seconds).",
    labelNames: ["provider"],
    registers: [registry],
    async collect() {
      const { rows } = await pool.query<{ provider: string; t: number }>(
        `SELECT provider, extract(epoch FROM max(finished_at))::float8 AS t FROM reconciliation_runs
          WHERE status = 'completed' GROUP BY provider`,
      );
      this.reset();
      for (const row of rows) this.set({ provider: row.provider }, row.t);
    },
  });
  const metrics = { runs };
  registered.set(registry, metrics);
  return metrics;
}
