-- onceboard_gaps_upsert: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The statement that adds a set of per-minute deltas (a query yielding minute, job_type,
-- gap_buckets, gap_seconds_sum, claims_beyond_retention) to worker_gaps_hour and worker_gaps_day.
-- Built as text and EXECUTEd inside each trigger function, where the transition tables are visible.
CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_upsert(deltas text, unit text, target text)
RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT format('WITH d AS (SELECT date_trunc(%L, minute, ''UTC'') AS t, job_type, gap_buckets, gap_seconds_sum,
                            claims_beyond_retention FROM (%s) AS x),
  elems AS (
    SELECT d.t, d.job_type, u.i, sum(u.b)::bigint AS b
      FROM d, unnest(d.gap_buckets) WITH ORDINALITY AS u(b, i)
     GROUP BY d.t, d.job_type, u.i
  ), arrays AS (
    SELECT t, job_type, array_agg(b ORDER BY i) AS buckets FROM elems GROUP BY t, job_type
  ), totals AS (
    SELECT t, job_type, sum(gap_seconds_sum) AS gap_sum, sum(claims_beyond_retention)::bigint AS beyond
      FROM d GROUP BY t, job_type
  )
  INSERT INTO onceboard.%I AS g (%I, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention)
  SELECT tt.t, tt.job_type, coalesce(a.buckets, ''{}''), tt.gap_sum, tt.beyond
    FROM totals tt LEFT JOIN arrays a USING (t, job_type)
  ON CONFLICT (%I, job_type) DO UPDATE SET
    gap_buckets = onceboard.onceboard_add_counts(g.gap_buckets, EXCLUDED.gap_buckets),
    gap_seconds_sum = g.gap_seconds_sum + EXCLUDED.gap_seconds_sum,
    claims_beyond_retention = g.claims_beyond_retention + EXCLUDED.claims_beyond_retention', unit, deltas, target, unit, unit)
$$;
