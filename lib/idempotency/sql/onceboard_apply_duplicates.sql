-- onceboard_apply_duplicates: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The duplicate ledger's flush (lib/idempotency/duplicates.ts): adds each effect's duplicates seen
-- since the last flush to its row. One UPDATE joined to the set, its plan pinned, in key order:
-- onceboard_complete_batch says why (two workers' flushes often share hot keys, so the order
-- matters here). One entry per effect (the ledger keys its entries so): two for one row would update
-- it once. Returns how many rows it updated.
CREATE OR REPLACE FUNCTION onceboard.onceboard_apply_duplicates(p_duplicates jsonb)
RETURNS integer
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
DECLARE
  lo timestamptz;
  hi timestamptz;
  updated integer;
BEGIN
  SELECT min(j.created_at), max(j.created_at) INTO lo, hi
    FROM jsonb_to_recordset(p_duplicates) AS j(created_at timestamptz);
  UPDATE onceboard.effects f
     SET duplicate_count = f.duplicate_count + d.n,
         last_duplicate_at = greatest(f.last_duplicate_at, d.last_at),
         max_gap_seconds = greatest(coalesce(f.max_gap_seconds, 0), d.max_gap),
         last_message_id = coalesce(d.last_message_id, f.last_message_id)
    FROM (SELECT * FROM jsonb_to_recordset(p_duplicates)
                          AS j(tenant_id text, key text, created_at timestamptz, n integer, last_at timestamptz,
                               max_gap double precision, last_message_id text)
           ORDER BY j.tenant_id, j.key) d
   WHERE f.tenant_id = d.tenant_id AND f.key = d.key AND f.created_at = d.created_at
     AND f.created_at BETWEEN lo AND hi;
  GET DIAGNOSTICS updated = ROW_COUNT;
  RETURN updated;
END;
$$;
