/**
 * What the fake worker started by scripts/e2e.ts serves on /metrics: a prom-client exposition of
 * the worker library's metrics, with label values that trip a naive parser, and the sums the
 * Workers panel must show for it.
 */
export const WORKER_EXPOSITION = `# HELP idem_claims_total Effect claims by final result of the claim.
# TYPE idem_claims_total counter
idem_claims_total{job_type="capture-payment",result="claimed"} 1000
idem_claims_total{job_type="capture-payment",result="duplicate"} 56
idem_claims_total{job_type="send receipt, \\"eu\\" {v2}",result="claimed"} 178

# HELP idem_duplicate_suppressions_total Deliveries whose effect had already completed: the step was not run, the stored outcome returned.
# TYPE idem_duplicate_suppressions_total counter
idem_duplicate_suppressions_total{job_type="capture-payment"} 56

# HELP idem_deliveries_total Deliveries handed to effects.job / effects.once.
# TYPE idem_deliveries_total counter
idem_deliveries_total{job_type="capture-payment",redelivered="false"} 1100
idem_deliveries_total{job_type="capture-payment",redelivered="true"} 70
idem_deliveries_total{job_type="send receipt, \\"eu\\" {v2}",redelivered="true"} 8

# HELP idem_unique_violations_uncaught_total Unique violations (23505) raised by handlers' own writes, not by claims: a missing guard.
# TYPE idem_unique_violations_uncaught_total counter
idem_unique_violations_uncaught_total{job_type="send receipt, \\"eu\\" {v2}",constraint="receipts_order_id_key"} 3

# HELP idem_redelivery_gap_seconds Seconds from an effect's first claim to a suppressed duplicate delivery.
# TYPE idem_redelivery_gap_seconds histogram
idem_redelivery_gap_seconds_bucket{le="1",job_type="capture-payment"} 40
idem_redelivery_gap_seconds_bucket{le="+Inf",job_type="capture-payment"} 56
idem_redelivery_gap_seconds_sum{job_type="capture-payment"} 912.5
idem_redelivery_gap_seconds_count{job_type="capture-payment"} 56

# HELP idem_worker_info 1, labelled with this worker's name across restarts (the workerName option): the console counts its restarts from the starts recorded under that name.
# TYPE idem_worker_info gauge
idem_worker_info{worker_name="e2e-worker-0"} 1

# HELP process_cpu_user_seconds_total Total user CPU time spent in seconds.
# TYPE process_cpu_user_seconds_total counter
process_cpu_user_seconds_total 1.234
`;

export const WORKER_EXPECTED = { claims: 1234, duplicateSuppressions: 56, redeliveries: 78, uncaughtViolations: 3 };

/** The fake worker's name (its idem_worker_info) and the restarts seedWorkerStarts records for it in the last hour. */
export const WORKER_NAME = "e2e-worker-0";
export const WORKER_RESTARTS = 3;

/**
 * The starts the fake worker "recorded" as the worker library records them (worker_starts): its
 * first start three hours before `now`, then WORKER_RESTARTS in the last hour (each a new process,
 * as after a kill). No console scraped any of them: the panel still counts them. The restarts are
 * 15, 10 and 5 minutes old when seeded, so they stay inside the panel's hour for the 45 minutes a
 * slow run may take to reach e2e/workers.spec.ts (seeded 50, 35 and 20 minutes back, the oldest left
 * the hour after 10 minutes: a CI run that took 10.7 minutes counted 2).
 */
export async function seedWorkerStarts(db: { query(text: string, values?: unknown[]): Promise<unknown> }, now = new Date()) {
  const minutesAgo = [180, ...Array.from({ length: WORKER_RESTARTS }, (_, k) => 5 * (WORKER_RESTARTS - k))];
  for (const [i, minutes] of minutesAgo.entries())
    await db.query(
      `INSERT INTO onceboard.worker_starts (worker_name, process_started_at, host, pid, worker_id)
       VALUES ($1, $2, 'e2e-host', $3, $4)`,
      [WORKER_NAME, new Date(now.getTime() - minutes * 60_000), 4000 + i, `${WORKER_NAME}:${4000 + i}`],
    );
}
