-- onceboard_stats_to_hour: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

CREATE OR REPLACE FUNCTION onceboard.onceboard_stats_to_hour() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO onceboard.worker_stats_hour AS h (hour, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed,
           key_reuse, uncaught_violations, deliveries, redeliveries, claim_seconds_sum)
    VALUES (date_trunc('hour', NEW.minute), NEW.job_type, NEW.claims - OLD.claims, NEW.suppressed - OLD.suppressed,
            NEW.in_flight - OLD.in_flight, NEW.takeovers - OLD.takeovers, NEW.abandoned - OLD.abandoned,
            NEW.failed - OLD.failed, NEW.key_reuse - OLD.key_reuse, NEW.uncaught_violations - OLD.uncaught_violations,
            NEW.deliveries - OLD.deliveries, NEW.redeliveries - OLD.redeliveries,
            NEW.claim_seconds_sum - OLD.claim_seconds_sum)
    ON CONFLICT (hour, job_type) DO UPDATE SET
      claims = h.claims + EXCLUDED.claims, suppressed = h.suppressed + EXCLUDED.suppressed,
      in_flight = h.in_flight + EXCLUDED.in_flight, takeovers = h.takeovers + EXCLUDED.takeovers,
      abandoned = h.abandoned + EXCLUDED.abandoned, failed = h.failed + EXCLUDED.failed,
      key_reuse = h.key_reuse + EXCLUDED.key_reuse, uncaught_violations = h.uncaught_violations + EXCLUDED.uncaught_violations,
      deliveries = h.deliveries + EXCLUDED.deliveries, redeliveries = h.redeliveries + EXCLUDED.redeliveries,
      claim_seconds_sum = h.claim_seconds_sum + EXCLUDED.claim_seconds_sum;
  ELSE
    INSERT INTO onceboard.worker_stats_hour AS h (hour, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed,
           key_reuse, uncaught_violations, deliveries, redeliveries, claim_seconds_sum)
    VALUES (date_trunc('hour', NEW.minute), NEW.job_type, NEW.claims, NEW.suppressed, NEW.in_flight, NEW.takeovers,
            NEW.abandoned, NEW.failed, NEW.key_reuse, NEW.uncaught_violations, NEW.deliveries, NEW.redeliveries,
            NEW.claim_seconds_sum)
    ON CONFLICT (hour, job_type) DO UPDATE SET
      claims = h.claims + EXCLUDED.claims, suppressed = h.suppressed + EXCLUDED.suppressed,
      in_flight = h.in_flight + EXCLUDED.in_flight, takeovers = h.takeovers + EXCLUDED.takeovers,
      abandoned = h.abandoned + EXCLUDED.abandoned, failed = h.failed + EXCLUDED.failed,
      key_reuse = h.key_reuse + EXCLUDED.key_reuse, uncaught_violations = h.uncaught_violations + EXCLUDED.uncaught_violations,
      deliveries = h.deliveries + EXCLUDED.deliveries, redeliveries = h.redeliveries + EXCLUDED.redeliveries,
      claim_seconds_sum = h.claim_seconds_sum + EXCLUDED.claim_seconds_sum;
  END IF;
  RETURN NULL;
END;
$$;
