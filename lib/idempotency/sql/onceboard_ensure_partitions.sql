-- onceboard_ensure_partitions: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Creates the daily partitions covering [from_day, to_day], each with its own unique index on
-- (tenant_id, key) so same-partition duplicates are caught natively by ON CONFLICT.
-- Concurrent callers (two workers starting together) are serialised by a transaction-level
-- advisory lock: CREATE TABLE IF NOT EXISTS alone still races on the catalog.
CREATE OR REPLACE FUNCTION onceboard_ensure_partitions(from_day date, to_day date)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  day date;
  name text;
  created integer := 0;
BEGIN
  IF to_day < from_day THEN
    RAISE EXCEPTION 'onceboard_ensure_partitions: to_day % is before from_day %', to_day, from_day;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('onceboard:partitions', 0));
  day := from_day;
  WHILE day <= to_day LOOP
    name := 'effects_p' || to_char(day, 'YYYYMMDD');
    IF to_regclass(name) IS NULL THEN
      created := created + 1;
    END IF;
    EXECUTE format(
      'CREATE TABLE IF NOT EXISTS %I PARTITION OF effects FOR VALUES FROM (%L) TO (%L)',
      name, (day::timestamp AT TIME ZONE 'UTC'), ((day + 1)::timestamp AT TIME ZONE 'UTC'));
    EXECUTE format('CREATE UNIQUE INDEX IF NOT EXISTS %I ON %I (tenant_id, key)', name || '_tenant_key_uq', name);
    day := day + 1;
  END LOOP;
  RETURN created;
END;
$$;
