-- onceboard_claim_bucket_bounds: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Upper bounds, in seconds, of the claim-duration buckets stored in claim_latency_minute.buckets
-- (then +Inf): the same list as idem_claim_duration_seconds in lib/idempotency/metrics.ts.
CREATE OR REPLACE FUNCTION onceboard.onceboard_claim_bucket_bounds()
RETURNS double precision[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]::double precision[]
$$;
