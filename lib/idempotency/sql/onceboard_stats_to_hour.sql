-- onceboard_stats_to_hour: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps worker_stats_hour the exact sum of worker_stats_minute per UTC hour and job type, counters
-- and gap histogram alike (the Overview and the Delivery gaps page read the same rows): each row
-- change adds its increment, NEW minus OLD (an INSERT has no OLD, a DELETE no NEW). A DELETE that
-- leaves an hour without any count removes the hour, so deleting marked rows leaves no trace of them
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
