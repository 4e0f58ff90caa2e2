-- onceboard_latency_to_10m: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The same for the claim-latency histogram: each claim_latency_minute upsert's increment, added
-- to its ten-minute bucket.
CREATE OR REPLACE FUNCTION onceboard.onceboard_latency_to_10m() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO onceboard.claim_latency_10m AS t (bucket, job_type, buckets)
  VALUES (date_bin('10 minutes', NEW.minute, timestamptz '2000-01-01 00:00:00+00'), NEW.job_type,
          CASE WHEN TG_OP = 'UPDATE' THEN onceboard.onceboard_sub_counts(NEW.buckets, OLD.buckets) ELSE NEW.buckets END)
  ON CONFLICT (bucket, job_type) DO UPDATE SET buckets = onceboard.onceboard_add_counts(t.buckets, EXCLUDED.buckets);
  RETURN NULL;
END;
$$;
