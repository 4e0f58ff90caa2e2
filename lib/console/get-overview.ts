import type { Queryable } from "../db/types";
import { consoleDatabase } from "./database";
import {
  EFFECT_STATUSES,
  type EffectStatus,
  type JobTypeOverview,
  type Overview,
  type OverviewWindow,
  type StatusCounts,
  type UncaughtViolationRow,
  WINDOW_SECONDS,
} from "./overview-types";

export interface GetOverviewInput {
  window: OverviewWindow;
  /** The end of the window; defaults to now (tests pin it). */
  now?: Date;
}

// Effects created in the window, by job type and status. The created_at range lets the planner
// prune to the partitions the window touches. "Stuck" = in progress with an expired lease: a
// worker died holding the claim and nobody has taken it over yet.
const EFFECTS_SQL = `
SELECT job_type,
       status,
       count(*) AS n,
       count(*) FILTER (WHERE status = 'in_progress' AND lease_until < $2) AS stuck
  FROM effects
 WHERE created_at >= $1 AND created_at <= $2
 GROUP BY job_type, status`;

// Claims and suppressions come from the workers' per-minute rollups, not from the effects table:
// a suppressed duplicate writes no effect row of its own (only duplicate_count on the original).
const WORKER_STATS_SQL = `
SELECT job_type, sum(claims) AS claims, sum(suppressed) AS suppressed
  FROM worker_stats_minute
 WHERE minute >= date_trunc('minute', $1::timestamptz) AND minute <= $2
 GROUP BY job_type`;

// Unique violations raised by handlers' own writes, per constraint: each is a guard bug, not a duplicate.
const UNCAUGHT_SQL = `
SELECT job_type, constraint_name, sum(count) AS n, max(minute) AS last_seen
  FROM uncaught_violations_minute
 WHERE minute >= date_trunc('minute', $1::timestamptz) AND minute <= $2
 GROUP BY job_type, constraint_name
 ORDER BY n DESC, job_type, constraint_name`;

const zeroStatuses = (): StatusCounts => ({ in_progress: 0, completed: 0, failed: 0, abandoned: 0 });

const isStatus = (value: string): value is EffectStatus => (EFFECT_STATUSES as readonly string[]).includes(value);

/** The Overview page's question: what did the effects and the workers do in this window? */
export async function getOverview(input: GetOverviewInput, db: Queryable = consoleDatabase()): Promise<Overview> {
  const to = input.now ?? new Date();
  const from = new Date(to.getTime() - WINDOW_SECONDS[input.window] * 1000);
  const params = [from.toISOString(), to.toISOString()];

  const [effects, stats, uncaught] = await Promise.all([
    db.query<{ job_type: string; status: string; n: string | number; stuck: string | number }>(EFFECTS_SQL, params),
    db.query<{ job_type: string; claims: string | number; suppressed: string | number }>(WORKER_STATS_SQL, params),
    db.query<{ job_type: string; constraint_name: string; n: string | number; last_seen: Date }>(UNCAUGHT_SQL, params),
  ]);

  const byJobType = new Map<string, JobTypeOverview>();
  const row = (jobType: string): JobTypeOverview => {
    let entry = byJobType.get(jobType);
    if (!entry) {
      entry = {
        jobType,
        effects: { ...zeroStatuses(), total: 0 },
        stuck: 0,
        claims: 0,
        duplicateSuppressions: 0,
        uncaughtViolations: 0,
      };
      byJobType.set(jobType, entry);
    }
    return entry;
  };

  for (const r of effects.rows) {
    const entry = row(r.job_type);
    const n = Number(r.n);
    if (isStatus(r.status)) entry.effects[r.status] += n;
    entry.effects.total += n;
    entry.stuck += Number(r.stuck);
  }
  for (const r of stats.rows) {
    const entry = row(r.job_type);
    entry.claims += Number(r.claims);
    entry.duplicateSuppressions += Number(r.suppressed);
  }
  const uncaughtViolations: UncaughtViolationRow[] = uncaught.rows.map((r) => {
    const count = Number(r.n);
    row(r.job_type).uncaughtViolations += count;
    return { jobType: r.job_type, constraintName: r.constraint_name, count, lastSeenAt: new Date(r.last_seen).toISOString() };
  });

  const jobTypes = [...byJobType.values()].sort(
    (a, b) =>
      b.effects.total - a.effects.total ||
      b.claims + b.duplicateSuppressions - (a.claims + a.duplicateSuppressions) ||
      a.jobType.localeCompare(b.jobType),
  );

  const totals: Overview["totals"] = {
    ...zeroStatuses(),
    effects: 0,
    stuck: 0,
    claims: 0,
    duplicateSuppressions: 0,
    uncaughtViolations: 0,
  };
  for (const j of jobTypes) {
    for (const status of EFFECT_STATUSES) totals[status] += j.effects[status];
    totals.effects += j.effects.total;
    totals.stuck += j.stuck;
    totals.claims += j.claims;
    totals.duplicateSuppressions += j.duplicateSuppressions;
    totals.uncaughtViolations += j.uncaughtViolations;
  }

  return { window: input.window, from: from.toISOString(), to: to.toISOString(), totals, jobTypes, uncaughtViolations };
}
