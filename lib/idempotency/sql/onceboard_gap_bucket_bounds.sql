-- onceboard_gap_bucket_bounds: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Upper bounds, in seconds, of the redelivery-gap buckets stored in worker_stats_minute.gap_buckets
-- (1 s … 30 d, then +Inf). Kept in one place so the worker, the console and Prometheus agree.
CREATE OR REPLACE FUNCTION onceboard.onceboard_gap_bucket_bounds()
RETURNS double precision[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[1, 5, 15, 60, 300, 900, 3600, 14400, 43200, 86400, 172800, 259200, 604800, 1209600, 2592000]::double precision[]
$$;
