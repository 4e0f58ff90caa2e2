-- onceboard_ensure_partitions: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Startup's premake (onceboard_ensure_partitions, daily) must not collide with partitions the
-- manager made at another interval: a day already overlapped by any partition is left alone
-- (the manager fills any gap). Each daily effects partition gets its delivery_timeline partition
-- of the same bounds (named delivery_timeline_pYYYYMMDD), made here too so that a fresh install
-- can record deliveries before the manager first runs (UNLOGGED, as migration 0010 explains). Same signature as before.
CREATE OR REPLACE FUNCTION onceboard.onceboard_ensure_partitions(from_day date, to_day date)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  day date;
  name text;
  timeline text;
  lo timestamptz;
  hi timestamptz;
  created integer := 0;
BEGIN
  IF to_day < from_day THEN
    RAISE EXCEPTION 'onceboard_ensure_partitions: to_day % is before from_day %', to_day, from_day;
  END IF;
  -- The installation's own partitions lock: 'onceboard.' is rewritten to the schema like every
  -- object name, so another schema's premake never waits for this one (maintenance-sql.ts).
  PERFORM pg_advisory_xact_lock(hashtextextended('onceboard.partitions', 0));
  day := from_day;
  WHILE day <= to_day LOOP
    name := 'effects_p' || to_char(day, 'YYYYMMDD');
    lo := day::timestamp AT TIME ZONE 'UTC';
    hi := (day + 1)::timestamp AT TIME ZONE 'UTC';
    IF to_regclass('onceboard.' || quote_ident(name)) IS NULL AND NOT EXISTS (
      SELECT 1
        FROM pg_inherits i
       WHERE i.inhparent = 'onceboard.effects'::regclass
         AND tstzrange(lo, hi) && tstzrange(
               (regexp_match(pg_get_expr((SELECT relpartbound FROM pg_class WHERE oid = i.inhrelid), i.inhrelid),
                             'FROM \(''([^'']+)''\) TO'))[1]::timestamptz,
               (regexp_match(pg_get_expr((SELECT relpartbound FROM pg_class WHERE oid = i.inhrelid), i.inhrelid),
                             'TO \(''([^'']+)''\)'))[1]::timestamptz)
    ) THEN
      EXECUTE format('CREATE TABLE onceboard.%I PARTITION OF onceboard.effects FOR VALUES FROM (%L) TO (%L)', name, lo, hi);
      EXECUTE format('CREATE UNIQUE INDEX IF NOT EXISTS %I ON onceboard.%I (tenant_id, key)', name || '_tenant_key_uq', name);
      -- Its replica identity: Citus moves a shard online by logical replication, which refuses a
      -- table that has none (effects has no primary key). On one server only logical decoding reads it.
      EXECUTE format('ALTER TABLE onceboard.%I REPLICA IDENTITY USING INDEX %I', name, name || '_tenant_key_uq');
      created := created + 1;
    END IF;
    timeline := 'delivery_timeline_p' || to_char(day, 'YYYYMMDD');
    IF to_regclass('onceboard.' || quote_ident(timeline)) IS NULL AND EXISTS (
      SELECT 1 FROM pg_inherits i
       WHERE i.inhparent = 'onceboard.effects'::regclass AND i.inhrelid = to_regclass('onceboard.' || quote_ident(name))
    ) THEN
      EXECUTE format('CREATE UNLOGGED TABLE onceboard.%I PARTITION OF onceboard.delivery_timeline FOR VALUES FROM (%L) TO (%L)',
                     timeline, lo, hi);
    END IF;
    day := day + 1;
  END LOOP;
  RETURN created;
END;
$$;
