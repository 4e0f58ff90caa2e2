-- Issue 12: one hourly table instead of two. worker_gaps_hour (the gap histogram per hour, kept by
-- three statement triggers) and worker_stats_hour (the counters per hour, kept by a row trigger)
-- summed the same worker_stats_minute rows into the same (hour, job_type) keys by two paths.
-- worker_stats_hour takes the gap columns and worker_gaps_hour's rows, and one row trigger
-- (onceboard_stats_to_hour, now also on DELETE) keeps it all. worker_gaps_day stays, fed from the
-- hourly table by onceboard_gaps_to_day: without it the gaps page reads 30 days as 36,000 hour rows,
-- and bench:gaps measured that at p95 503 ms against its 250 ms target (docs/benchmarks.md).
-- Hours and days are UTC (date_trunc(…, 'UTC')), as the gap summaries were.

ALTER TABLE onceboard.worker_stats_hour
  ADD COLUMN gap_buckets bigint[] NOT NULL DEFAULT '{}'::bigint[],
  ADD COLUMN gap_seconds_sum double precision NOT NULL DEFAULT 0,
  ADD COLUMN claims_beyond_retention bigint NOT NULL DEFAULT 0;

DROP TRIGGER worker_stats_minute_gaps_insert ON onceboard.worker_stats_minute;
DROP TRIGGER worker_stats_minute_gaps_update ON onceboard.worker_stats_minute;
DROP TRIGGER worker_stats_minute_gaps_delete ON onceboard.worker_stats_minute;
DROP TRIGGER worker_stats_minute_to_hour ON onceboard.worker_stats_minute;
DROP FUNCTION onceboard.onceboard_gaps_hour_on_insert();
DROP FUNCTION onceboard.onceboard_gaps_hour_on_update();
DROP FUNCTION onceboard.onceboard_gaps_hour_on_delete();
DROP FUNCTION onceboard.onceboard_gaps_apply(text);
DROP FUNCTION onceboard.onceboard_gaps_upsert(text, text, text);

INSERT INTO onceboard.worker_stats_hour (hour, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention)
SELECT hour, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention FROM onceboard.worker_gaps_hour
ON CONFLICT (hour, job_type) DO UPDATE SET
  gap_buckets = EXCLUDED.gap_buckets, gap_seconds_sum = EXCLUDED.gap_seconds_sum,
  claims_beyond_retention = EXCLUDED.claims_beyond_retention;
DROP TABLE onceboard.worker_gaps_hour;

-- Stamped by `npm run db:stamp` from lib/idempotency/sql/ (onceboard_stats_to_hour.sql; onceboard_gaps_to_day.sql added by hand):
-- edit those sources, never this migration. Objects are named onceboard.<name>: migrate() rewrites that.

-- onceboard_stats_to_hour: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps worker_stats_hour the exact sum of worker_stats_minute per UTC hour and job type, counters
-- and gap histogram alike (the Overview and the Delivery gaps page read the same rows): each row
-- change adds its increment, NEW minus OLD (an INSERT has no OLD, a DELETE no NEW). A DELETE that
-- leaves an hour without any count removes the hour, so demo:reset leaves no trace of the demo
-- (the float sums are not looked at: without counts they are rounding residue). A minute row's key
-- never changes in an UPDATE: upserts only add to a row.
CREATE OR REPLACE FUNCTION onceboard.onceboard_stats_to_hour() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.worker_stats_minute;
  o onceboard.worker_stats_minute;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.worker_stats_hour AS h (hour, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed,
         key_reuse, uncaught_violations, deliveries, redeliveries, claim_seconds_sum, gap_buckets, gap_seconds_sum,
         claims_beyond_retention)
  VALUES (date_trunc('hour', coalesce(n.minute, o.minute), 'UTC'), coalesce(n.job_type, o.job_type),
          coalesce(n.claims, 0) - coalesce(o.claims, 0), coalesce(n.suppressed, 0) - coalesce(o.suppressed, 0),
          coalesce(n.in_flight, 0) - coalesce(o.in_flight, 0), coalesce(n.takeovers, 0) - coalesce(o.takeovers, 0),
          coalesce(n.abandoned, 0) - coalesce(o.abandoned, 0), coalesce(n.failed, 0) - coalesce(o.failed, 0),
          coalesce(n.key_reuse, 0) - coalesce(o.key_reuse, 0),
          coalesce(n.uncaught_violations, 0) - coalesce(o.uncaught_violations, 0),
          coalesce(n.deliveries, 0) - coalesce(o.deliveries, 0), coalesce(n.redeliveries, 0) - coalesce(o.redeliveries, 0),
          coalesce(n.claim_seconds_sum, 0) - coalesce(o.claim_seconds_sum, 0),
          CASE WHEN TG_OP = 'INSERT' THEN n.gap_buckets ELSE onceboard.onceboard_sub_counts(coalesce(n.gap_buckets, '{}'), o.gap_buckets) END,
          coalesce(n.gap_seconds_sum, 0) - coalesce(o.gap_seconds_sum, 0),
          coalesce(n.claims_beyond_retention, 0) - coalesce(o.claims_beyond_retention, 0))
  ON CONFLICT (hour, job_type) DO UPDATE SET
    claims = h.claims + EXCLUDED.claims, suppressed = h.suppressed + EXCLUDED.suppressed,
    in_flight = h.in_flight + EXCLUDED.in_flight, takeovers = h.takeovers + EXCLUDED.takeovers,
    abandoned = h.abandoned + EXCLUDED.abandoned, failed = h.failed + EXCLUDED.failed,
    key_reuse = h.key_reuse + EXCLUDED.key_reuse, uncaught_violations = h.uncaught_violations + EXCLUDED.uncaught_violations,
    deliveries = h.deliveries + EXCLUDED.deliveries, redeliveries = h.redeliveries + EXCLUDED.redeliveries,
    claim_seconds_sum = h.claim_seconds_sum + EXCLUDED.claim_seconds_sum,
    gap_buckets = onceboard.onceboard_add_counts(h.gap_buckets, EXCLUDED.gap_buckets),
    gap_seconds_sum = h.gap_seconds_sum + EXCLUDED.gap_seconds_sum,
    claims_beyond_retention = h.claims_beyond_retention + EXCLUDED.claims_beyond_retention;
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.worker_stats_hour h
     WHERE h.hour = date_trunc('hour', OLD.minute, 'UTC') AND h.job_type = OLD.job_type
       AND h.claims = 0 AND h.suppressed = 0 AND h.in_flight = 0 AND h.takeovers = 0 AND h.abandoned = 0 AND h.failed = 0
       AND h.key_reuse = 0 AND h.uncaught_violations = 0 AND h.deliveries = 0 AND h.redeliveries = 0
       AND h.claims_beyond_retention = 0 AND 0 = ALL (h.gap_buckets);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER worker_stats_minute_to_hour AFTER INSERT OR UPDATE OR DELETE ON onceboard.worker_stats_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_stats_to_hour();

-- onceboard_gaps_to_day: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps worker_gaps_day the gap histogram of worker_stats_hour per UTC day: the Delivery gaps page
-- reads 30 whole days as 1,500 rows for 50 job types instead of 36,000 hours (bench:gaps measured
-- the hours alone at p95 503 ms, over its 250 ms target). Fed from the hourly table, so the minutes
-- have one path up. Each hour row change adds NEW minus OLD; an UPDATE that leaves the gap columns
-- alone (most flushes) costs nothing more. A day row exists only while an hour row of its job type
-- does: deleting the last one (demo:reset) deletes the day.
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

CREATE TRIGGER worker_stats_hour_gaps_to_day AFTER INSERT OR UPDATE OR DELETE ON onceboard.worker_stats_hour
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_gaps_to_day();
