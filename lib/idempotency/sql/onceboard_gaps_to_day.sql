-- onceboard_gaps_to_day: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps worker_gaps_day the gap histogram of worker_stats_hour per UTC day: the Delivery gaps page
-- reads 30 whole days as 1,500 rows for 50 job types instead of 36,000 hours (bench:gaps measured
-- the hours alone at p95 503 ms, over its 250 ms target). Fed from the hourly table, so the minutes
-- have one path up. Each hour row change adds NEW minus OLD; an UPDATE that leaves the gap columns
-- alone (most flushes) costs nothing more. A day row exists only while an hour row of its job type
-- does: deleting the last one (a marked workload's rows, say) deletes the day.
CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_to_day() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.worker_stats_hour;
  o onceboard.worker_stats_hour;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  IF (TG_OP = 'UPDATE' AND n.gap_buckets = o.gap_buckets AND n.gap_seconds_sum = o.gap_seconds_sum
      AND n.claims_beyond_retention = o.claims_beyond_retention)
     OR (TG_OP = 'INSERT' AND cardinality(n.gap_buckets) = 0 AND n.gap_seconds_sum = 0 AND n.claims_beyond_retention = 0) THEN
    RETURN NULL;
  END IF;
  INSERT INTO onceboard.worker_gaps_day AS d (day, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention)
  VALUES (date_trunc('day', coalesce(n.hour, o.hour), 'UTC'), coalesce(n.job_type, o.job_type),
          CASE WHEN TG_OP = 'INSERT' THEN n.gap_buckets ELSE onceboard.onceboard_sub_counts(coalesce(n.gap_buckets, '{}'), o.gap_buckets) END,
          coalesce(n.gap_seconds_sum, 0) - coalesce(o.gap_seconds_sum, 0),
          coalesce(n.claims_beyond_retention, 0) - coalesce(o.claims_beyond_retention, 0))
  ON CONFLICT (day, job_type) DO UPDATE SET
    gap_buckets = onceboard.onceboard_add_counts(d.gap_buckets, EXCLUDED.gap_buckets),
    gap_seconds_sum = d.gap_seconds_sum + EXCLUDED.gap_seconds_sum,
    claims_beyond_retention = d.claims_beyond_retention + EXCLUDED.claims_beyond_retention;
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.worker_gaps_day d
     WHERE d.day = date_trunc('day', OLD.hour, 'UTC') AND d.job_type = OLD.job_type
       AND NOT EXISTS (SELECT 1 FROM onceboard.worker_stats_hour h
                        WHERE h.hour >= d.day AND h.hour < d.day + interval '24 hours' AND h.job_type = d.job_type);
  END IF;
  RETURN NULL;
END;
$$;
