-- onceboard_gaps_hour_on_delete: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_hour_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stmt text;
BEGIN
  FOREACH stmt IN ARRAY onceboard.onceboard_gaps_apply(
    'SELECT minute, job_type, onceboard.onceboard_sub_counts(''{}'', gap_buckets) AS gap_buckets,
            -gap_seconds_sum AS gap_seconds_sum, -claims_beyond_retention AS claims_beyond_retention
       FROM old_rows') LOOP
    EXECUTE stmt;
  END LOOP;
  RETURN NULL;
END;
$$;
