-- onceboard_stats_to_6h: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps worker_stats_6h the exact sum of worker_stats_minute per six-hour UTC bucket: the Overview
-- charts 30 days in 6-hour steps from 120 rows per job type instead of 720 hourly ones. Each row
-- change adds its increment, NEW minus OLD (an INSERT has no OLD, a DELETE no NEW); a DELETE that
-- leaves a bucket without any count removes it, so demo:reset takes the demo's counts out of this
-- level too.
CREATE OR REPLACE FUNCTION onceboard.onceboard_stats_to_6h() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.worker_stats_minute;
  o onceboard.worker_stats_minute;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.worker_stats_6h AS t (bucket, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries)
  VALUES (date_bin('6 hours', coalesce(n.minute, o.minute), timestamptz '2000-01-01 00:00:00+00'), coalesce(n.job_type, o.job_type),
          coalesce(n.claims, 0) - coalesce(o.claims, 0), coalesce(n.suppressed, 0) - coalesce(o.suppressed, 0),
          coalesce(n.in_flight, 0) - coalesce(o.in_flight, 0), coalesce(n.takeovers, 0) - coalesce(o.takeovers, 0),
          coalesce(n.deliveries, 0) - coalesce(o.deliveries, 0), coalesce(n.redeliveries, 0) - coalesce(o.redeliveries, 0))
  ON CONFLICT (bucket, job_type) DO UPDATE SET
    claims = t.claims + EXCLUDED.claims, suppressed = t.suppressed + EXCLUDED.suppressed,
    in_flight = t.in_flight + EXCLUDED.in_flight, takeovers = t.takeovers + EXCLUDED.takeovers,
    deliveries = t.deliveries + EXCLUDED.deliveries, redeliveries = t.redeliveries + EXCLUDED.redeliveries;
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.worker_stats_6h t
     WHERE t.bucket = date_bin('6 hours', OLD.minute, timestamptz '2000-01-01 00:00:00+00') AND t.job_type = OLD.job_type
       AND t.claims = 0 AND t.suppressed = 0 AND t.in_flight = 0 AND t.takeovers = 0 AND t.deliveries = 0 AND t.redeliveries = 0;
  END IF;
  RETURN NULL;
END;
$$;
