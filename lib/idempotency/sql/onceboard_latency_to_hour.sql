-- onceboard_latency_to_hour: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

CREATE OR REPLACE FUNCTION onceboard.onceboard_latency_to_hour() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO onceboard.claim_latency_hour AS h (hour, job_type, buckets)
  VALUES (date_trunc('hour', NEW.minute), NEW.job_type,
          CASE WHEN TG_OP = 'UPDATE' THEN onceboard.onceboard_sub_counts(NEW.buckets, OLD.buckets) ELSE NEW.buckets END)
  ON CONFLICT (hour, job_type) DO UPDATE SET buckets = onceboard.onceboard_add_counts(h.buckets, EXCLUDED.buckets);
  RETURN NULL;
END;
$$;
