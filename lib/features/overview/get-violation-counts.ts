import type { Scope } from "../../auth/scope";
import { consoleDatabase } from "../../console/database";
import type { Queryable } from "../../db/types";
import type { ViolationSeries } from "./contract";
import { addToViolationLine, type Buckets } from "./metrics/series-math";

/** Every uncaught violation count of one Overview, from one read of the durable rows. */
interface ViolationCounts {
  /** One line per (job type, constraint), a count per bucket. */
  series: ViolationSeries[];
  byTenant: Map<string, number>;
  byJobType: Map<string, number>;
  total: number;
  /** The window counted: [from, to), the buckets' span. */
  from: Date;
  to: Date;
}

// One row per violation is written the moment it happens (uncaught_violation_keys), while the
// rollups count them in worker memory until the next flush: a worker killed between flushes loses
// its rollup counts but never its rows. So every violation figure on a screen (banner, tiles, job
// types, tenants, chart) is counted here, from the rows, over the same window. Violations are rare:
// the rows of the window are few, grouped per bucket in SQL.
// Params: $1 tenant or null, $2 job type or null, $3 window start (ms), $4 window end (ms), $5 step (ms).
const COUNTS_SQL = `
SELECT floor((extract(epoch FROM occurred_at) * 1000 - $3::float8) / $5::float8)::int AS bucket,
       tenant_id, job_type, constraint_name, count(*)::int AS n
  FROM uncaught_violation_keys
 WHERE ($1::text IS NULL OR tenant_id = $1)
   AND ($2::text IS NULL OR job_type = $2)
   AND occurred_at >= to_timestamp($3::float8 / 1000) AND occurred_at < to_timestamp($4::float8 / 1000)
 GROUP BY 1, 2, 3, 4`;

/** The buckets' span [origin, last timestamp): the window every violation figure counts over. */
export function bucketWindow(buckets: Buckets): { from: Date; to: Date } {
  const end = buckets.timestamps[buckets.timestamps.length - 1] ?? buckets.originMs;
  return { from: new Date(buckets.originMs), to: new Date(end) };
}

/** The scope's uncaught violations over the buckets, per bucket, tenant, job type and constraint. */
export async function getViolationCounts(
  scope: Scope,
  input: { buckets: Buckets; jobType?: string | null },
  db: Queryable = consoleDatabase(),
): Promise<ViolationCounts> {
  const { buckets } = input;
  const { from, to } = bucketWindow(buckets);
  const { rows } = await db.query<{ bucket: number; tenant_id: string; job_type: string; constraint_name: string; n: number }>(
    COUNTS_SQL,
    [scope.tenant, input.jobType ?? null, from.getTime(), to.getTime(), buckets.stepSeconds * 1000],
  );
  const n = buckets.timestamps.length;
  const lines = new Map<string, ViolationSeries>();
  const byTenant = new Map<string, number>();
  const byJobType = new Map<string, number>();
  let total = 0;
  for (const r of rows) {
    total += r.n;
    byTenant.set(r.tenant_id, (byTenant.get(r.tenant_id) ?? 0) + r.n);
    byJobType.set(r.job_type, (byJobType.get(r.job_type) ?? 0) + r.n);
    addToViolationLine(lines, r, r.bucket, r.n, n);
  }
  return {
    series: [...lines.values()].sort((a, b) => a.name.localeCompare(b.name)),
    byTenant,
    byJobType,
    total,
    from,
    to,
  };
}

/** Workers that stopped without a clean shutdown (their registration's heartbeat lapsed) in a window. */
interface UnflushedWorkers {
  workers: number;
  /** The latest heartbeat among them: each died within its TTL after it. */
  lastHeartbeat: Date | null;
}

// A worker removes its registration when it closes (after its last flush); a worker that is killed
// leaves the row, whose heartbeat then lapses. Such a worker died within ttl_seconds after its last
// heartbeat, with whatever it had counted since its last flush still in memory. Counted when that
// interval meets the window and the heartbeat has lapsed by `now` (a worker killed less than a TTL
// ago still looks alive: it is counted once its row lapses).
// Params: $1 window start, $2 window end, $3 now.
const UNFLUSHED_SQL = `
SELECT count(*)::int AS workers, max(heartbeat_at) AS last_heartbeat
  FROM worker_registrations
 WHERE heartbeat_at + ttl_seconds * interval '1 second' <= $3
   AND heartbeat_at < $2
   AND heartbeat_at + ttl_seconds * interval '1 second' > $1`;

export async function getUnflushedWorkers(
  input: { from: Date; to: Date; now: Date },
  db: Queryable = consoleDatabase(),
): Promise<UnflushedWorkers> {
  const { rows } = await db.query<{ workers: number; last_heartbeat: Date | null }>(UNFLUSHED_SQL, [
    input.from,
    input.to,
    input.now,
  ]);
  const row = rows[0];
  return {
    workers: row?.workers ?? 0,
    lastHeartbeat: row?.last_heartbeat ? new Date(row.last_heartbeat) : null,
  };
}
