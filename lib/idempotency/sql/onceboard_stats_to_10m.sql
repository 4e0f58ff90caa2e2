-- onceboard_stats_to_10m: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Adds each worker_stats_minute upsert's increment (NEW minus OLD) to its ten-minute bucket: the
-- Overview charts 24 hours in 10-minute steps without reading a day of minutes. Buckets are UTC.
CREATE OR REPLACE FUNCTION onceboard.onceboard_stats_to_10m() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO onceboard.worker_stats_10m AS t (bucket, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries)
    VALUES (date_bin('10 minutes', NEW.minute, timestamptz '2000-01-01 00:00:00+00'), NEW.job_type,
            NEW.claims - OLD.claims, NEW.suppressed - OLD.suppressed, NEW.in_flight - OLD.in_flight,
            NEW.takeovers - OLD.takeovers, NEW.deliveries - OLD.deliveries, NEW.redeliveries - OLD.redeliveries)
    ON CONFLICT (bucket, job_type) DO UPDATE SET
      claims = t.claims + EXCLUDED.claims, suppressed = t.suppressed + EXCLUDED.suppressed,
      in_flight = t.in_flight + EXCLUDED.in_flight, takeovers = t.takeovers + EXCLUDED.takeovers,
      deliveries = t.deliveries + EXCLUDED.deliveries, redeliveries = t.redeliveries + EXCLUDED.redeliveries;
  ELSE
    INSERT INTO onceboard.worker_stats_10m AS t (bucket, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries)
    VALUES (date_bin('10 minutes', NEW.minute, timestamptz '2000-01-01 00:00:00+00'), NEW.job_type,
            NEW.claims, NEW.suppressed, NEW.in_flight, NEW.takeovers, NEW.deliveries, NEW.redeliveries)
    ON CONFLICT (bucket, job_type) DO UPDATE SET
      claims = t.claims + EXCLUDED.claims, suppressed = t.suppressed + EXCLUDED.suppressed,
      in_flight = t.in_flight + EXCLUDED.in_flight, takeovers = t.takeovers + EXCLUDED.takeovers,
      deliveries = t.deliveries + EXCLUDED.deliveries, redeliveries = t.redeliveries + EXCLUDED.redeliveries;
  END IF;
  RETURN NULL;
END;
$$;
