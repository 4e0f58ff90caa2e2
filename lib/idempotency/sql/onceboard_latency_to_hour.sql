-- onceboard_latency_to_hour: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps claim_latency_hour the exact sum of claim_latency_minute per UTC hour: each row change's
-- increment (NEW minus OLD), added element-wise; an hour a DELETE leaves without samples goes.
CREATE OR REPLACE FUNCTION onceboard.onceboard_latency_to_hour() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.claim_latency_minute;
  o onceboard.claim_latency_minute;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.claim_latency_hour AS h (hour, job_type, buckets)
  VALUES (date_trunc('hour', coalesce(n.minute, o.minute), 'UTC'), coalesce(n.job_type, o.job_type),
          CASE WHEN TG_OP = 'INSERT' THEN n.buckets ELSE onceboard.onceboard_sub_counts(coalesce(n.buckets, '{}'), o.buckets) END)
  ON CONFLICT (hour, job_type) DO UPDATE SET buckets = onceboard.onceboard_add_counts(h.buckets, EXCLUDED.buckets);
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.claim_latency_hour h
     WHERE h.hour = date_trunc('hour', OLD.minute, 'UTC') AND h.job_type = OLD.job_type AND 0 = ALL (h.buckets);
  END IF;
  RETURN NULL;
END;
$$;
