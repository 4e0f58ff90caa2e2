-- onceboard_latency_to_6h: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The same for the claim-latency histogram: each claim_latency_minute row change's increment (NEW
-- minus OLD), added to its six-hour bucket; a bucket a DELETE leaves without samples goes.
CREATE OR REPLACE FUNCTION onceboard.onceboard_latency_to_6h() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.claim_latency_minute;
  o onceboard.claim_latency_minute;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.claim_latency_6h AS t (bucket, job_type, buckets)
  VALUES (date_bin('6 hours', coalesce(n.minute, o.minute), timestamptz '2000-01-01 00:00:00+00'), coalesce(n.job_type, o.job_type),
          CASE WHEN TG_OP = 'INSERT' THEN n.buckets ELSE onceboard.onceboard_sub_counts(coalesce(n.buckets, '{}'), o.buckets) END)
  ON CONFLICT (bucket, job_type) DO UPDATE SET buckets = onceboard.onceboard_add_counts(t.buckets, EXCLUDED.buckets);
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.claim_latency_6h t
     WHERE t.bucket = date_bin('6 hours', OLD.minute, timestamptz '2000-01-01 00:00:00+00') AND t.job_type = OLD.job_type
       AND 0 = ALL (t.buckets);
  END IF;
  RETURN NULL;
END;
$$;
