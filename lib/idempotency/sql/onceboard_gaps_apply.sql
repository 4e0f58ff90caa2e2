-- onceboard_gaps_apply: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Both tables from one delta query.
CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_apply(deltas text)
RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[onceboard.onceboard_gaps_upsert(deltas, 'hour', 'worker_gaps_hour'), onceboard.onceboard_gaps_upsert(deltas, 'day', 'worker_gaps_day')]
$$;
