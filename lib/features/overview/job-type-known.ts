import type { Queryable } from "../../db/types";

// Every job type a worker ever flushed a rollup for: the hourly table holds the history, the
// minute table the minutes not yet rolled up. The rollups carry no tenant, so no scope applies.
const JOB_TYPE_KNOWN_SQL = `
SELECT EXISTS (SELECT 1 FROM worker_stats_hour WHERE job_type = $1)
    OR EXISTS (SELECT 1 FROM worker_stats_minute WHERE job_type = $1) AS known`;

/** Whether any worker ever reported `jobType`: a filter naming none is a typo, not a quiet job. */
export async function isKnownJobType(db: Queryable, jobType: string): Promise<boolean> {
  const { rows } = await db.query<{ known: boolean }>(JOB_TYPE_KNOWN_SQL, [jobType]);
  return rows[0]?.known === true;
}
