-- onceboard_gaps_hour_on_insert: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_hour_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stmt text;
BEGIN
  FOREACH stmt IN ARRAY onceboard.onceboard_gaps_apply(
    'SELECT minute, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention FROM new_rows
      WHERE cardinality(gap_buckets) > 0 OR gap_seconds_sum <> 0 OR claims_beyond_retention <> 0') LOOP
    EXECUTE stmt;
  END LOOP;
  RETURN NULL;
END;
$$;
