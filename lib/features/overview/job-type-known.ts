import { byEngine, type EffectsSource } from "../../console/effects-store";

// Every job type a worker ever flushed a rollup for: the hourly table holds the history, the
// minute table the minutes not yet rolled up. The rollups carry no tenant, so no scope applies.
const JOB_TYPE_KNOWN_SQL = `
SELECT EXISTS (SELECT 1 FROM worker_stats_hour WHERE job_type = $1)
    OR EXISTS (SELECT 1 FROM worker_stats_minute WHERE job_type = $1) AS known`;
// MySQL writes both levels on every flush (no trigger), so the same two tables answer there.
const JOB_TYPE_KNOWN_MYSQL = `
SELECT EXISTS (SELECT 1 FROM worker_stats_hour WHERE job_type = ?)
    OR EXISTS (SELECT 1 FROM worker_stats_minute WHERE job_type = ?) AS known`;

/** Whether any worker ever reported `jobType`: a filter naming none is a typo, not a quiet job. */
export async function isKnownJobType(db: EffectsSource, jobType: string): Promise<boolean> {
  const known = await byEngine<Promise<unknown>>(db, {
    postgres: async (pg) => (await pg.query<{ known: boolean }>(JOB_TYPE_KNOWN_SQL, [jobType])).rows[0]?.known,
    mysql: async (my) => (await my.query<{ known: number }>(JOB_TYPE_KNOWN_MYSQL, [jobType, jobType]))[0]?.known,
  });
  return Boolean(known);
}
