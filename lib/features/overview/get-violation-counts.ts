import type { Scope } from "../../auth/scope";
import { byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
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

// The same on MySQL: a row's bucket from the microseconds since the window's start (exact, and
// independent of the session's time zone, unlike UNIX_TIMESTAMP). Params: window start (twice, a
// Date), step (ms), tenant (twice), job type (twice), window end.
const COUNTS_MYSQL = `
SELECT FLOOR(TIMESTAMPDIFF(MICROSECOND, ?, occurred_at) / 1000 / ?) AS bucket,
       tenant_id, job_type, constraint_name, count(*) AS n
  FROM uncaught_violation_keys
 WHERE (? IS NULL OR tenant_id = ?)
   AND (? IS NULL OR job_type = ?)
   AND occurred_at >= ? AND occurred_at < ?
 GROUP BY 1, 2, 3, 4`;

interface CountRow {
  bucket: number;
  tenant_id: string;
  job_type: string;
  constraint_name: string;
  n: number;
}

/** The buckets' span [origin, last timestamp): the window every violation figure counts over. */
export function bucketWindow(buckets: Buckets): { from: Date; to: Date } {
  const end = buckets.timestamps[buckets.timestamps.length - 1] ?? buckets.originMs;
  return { from: new Date(buckets.originMs), to: new Date(end) };
}

/** The scope's uncaught violations over the buckets, per bucket, tenant, job type and constraint. */
export async function getViolationCounts(
  scope: Scope,
  input: { buckets: Buckets; jobType?: string | null },
  db: EffectsSource = effectsStore(),
): Promise<ViolationCounts> {
  const { buckets } = input;
  const { from, to } = bucketWindow(buckets);
  const jobType = input.jobType ?? null;
  const stepMs = buckets.stepSeconds * 1000;
  const rows = (
    await byEngine(db, {
      postgres: async (pg) =>
        (
          await pg.query<CountRow>(COUNTS_SQL, [scope.tenant, jobType, from.getTime(), to.getTime(), stepMs])
        ).rows,
      mysql: (my) => my.query<CountRow>(COUNTS_MYSQL, [from, stepMs, scope.tenant, scope.tenant, jobType, jobType, from, to]),
    })
  ).map((r) => ({ ...r, bucket: Number(r.bucket), n: Number(r.n) }));
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

const UNFLUSHED_MYSQL = `
SELECT count(*) AS workers, max(heartbeat_at) AS last_heartbeat
  FROM worker_registrations
 WHERE heartbeat_at + INTERVAL ttl_seconds SECOND <= ?
   AND heartbeat_at < ?
   AND heartbeat_at + INTERVAL ttl_seconds SECOND > ?`;

export async function getUnflushedWorkers(
  input: { from: Date; to: Date; now: Date },
  db: EffectsSource = effectsStore(),
): Promise<UnflushedWorkers> {
  type Row = { workers: number; last_heartbeat: Date | null };
  const [row] = await byEngine(db, {
    postgres: async (pg) => (await pg.query<Row>(UNFLUSHED_SQL, [input.from, input.to, input.now])).rows,
    mysql: (my) => my.query<Row>(UNFLUSHED_MYSQL, [input.now, input.to, input.from]),
  });
  return {
    workers: Number(row?.workers ?? 0),
    lastHeartbeat: row?.last_heartbeat ? new Date(row.last_heartbeat) : null,
  };
}
