-- onceboard_apply_duplicates: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The duplicate ledger's flush (lib/idempotency/duplicates.ts): adds each effect's duplicates seen
-- since the last flush to its row. One UPDATE per effect, in key order, for
-- onceboard_complete_batch's reasons (as a join it scanned the whole new partition per flush).
-- Returns how many rows it updated.
CREATE OR REPLACE FUNCTION onceboard.onceboard_apply_duplicates(p_duplicates jsonb)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  d record;
  updated integer := 0;
BEGIN
  FOR d IN
    SELECT * FROM jsonb_to_recordset(p_duplicates)
                    AS j(tenant_id text, key text, created_at timestamptz, n integer, last_at timestamptz,
                         max_gap double precision, last_message_id text)
     ORDER BY j.tenant_id, j.key
  LOOP
    UPDATE onceboard.effects f
       SET duplicate_count = f.duplicate_count + d.n,
           last_duplicate_at = greatest(f.last_duplicate_at, d.last_at),
           max_gap_seconds = greatest(coalesce(f.max_gap_seconds, 0), d.max_gap),
           last_message_id = coalesce(d.last_message_id, f.last_message_id)
     WHERE f.tenant_id = d.tenant_id AND f.key = d.key AND f.created_at = d.created_at;
    IF FOUND THEN
      updated := updated + 1;
    END IF;
  END LOOP;
  RETURN updated;
END;
$$;
