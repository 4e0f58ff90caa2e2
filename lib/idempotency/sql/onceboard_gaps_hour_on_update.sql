-- onceboard_gaps_hour_on_update: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_hour_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stmt text;
BEGIN
  -- Old and new rows are matched by the primary key (minute, job_type), which upserts never change.
  FOREACH stmt IN ARRAY onceboard.onceboard_gaps_apply(
    'SELECT n.minute, n.job_type, onceboard.onceboard_sub_counts(n.gap_buckets, o.gap_buckets) AS gap_buckets,
            n.gap_seconds_sum - o.gap_seconds_sum AS gap_seconds_sum,
            n.claims_beyond_retention - o.claims_beyond_retention AS claims_beyond_retention
       FROM new_rows n JOIN old_rows o USING (minute, job_type)
      WHERE n.gap_buckets <> o.gap_buckets OR n.gap_seconds_sum <> o.gap_seconds_sum
         OR n.claims_beyond_retention <> o.claims_beyond_retention') LOOP
    EXECUTE stmt;
  END LOOP;
  RETURN NULL;
END;
$$;
