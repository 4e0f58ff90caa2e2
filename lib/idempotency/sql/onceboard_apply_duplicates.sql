-- onceboard_apply_duplicates: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The duplicate ledger's flush (lib/idempotency/duplicates.ts): adds each effect's duplicates seen
-- since the last flush to its row. One UPDATE joined to the set, its plan pinned, in key order:
-- onceboard_complete_batch says why (two workers' flushes often share hot keys, so the order
-- matters here). One entry per effect (the ledger keys its entries so): two for one row would update
-- it once. Returns how many rows it updated.
--
-- An entry the joined UPDATE passed over is applied again on its own. Seen on PostgreSQL 18.4 under
-- the soak's load: the joined UPDATE reported fewer rows than entries, though a lookup right after
-- found every entry's row under its exact key, and those counts were lost (docs/soak.md, 2026-12-06).
-- The UPDATE returns the rows it changed, so the second pass takes exactly the entries it did not
-- change (never one twice); an entry whose row is really gone (pruned) still updates nothing.
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
  lo       timestamptz;
  hi       timestamptz;
  entries  integer;
  updated  integer;
  tenants  text[];
  keys     text[];
  created  timestamptz[];
  missed   record;
  n        integer;
BEGIN
  SELECT min(j.created_at), max(j.created_at), count(*) INTO lo, hi, entries
    FROM jsonb_to_recordset(p_duplicates) AS j(created_at timestamptz);
  WITH applied AS (
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
       AND f.created_at BETWEEN lo AND hi
    RETURNING f.tenant_id, f.key, f.created_at)
  SELECT count(*)::integer, array_agg(a.tenant_id), array_agg(a.key), array_agg(a.created_at)
    INTO updated, tenants, keys, created
    FROM applied a;
  IF updated < entries THEN
    FOR missed IN SELECT * FROM jsonb_to_recordset(p_duplicates)
                      AS j(tenant_id text, key text, created_at timestamptz, n integer, last_at timestamptz,
                           max_gap double precision, last_message_id text)
              WHERE NOT EXISTS (SELECT 1 FROM unnest(tenants, keys, created) AS a(tenant_id, key, created_at)
                                 WHERE a.tenant_id = j.tenant_id AND a.key = j.key AND a.created_at = j.created_at)
              ORDER BY j.tenant_id, j.key LOOP
      UPDATE onceboard.effects f
         SET duplicate_count = f.duplicate_count + missed.n,
             last_duplicate_at = greatest(f.last_duplicate_at, missed.last_at),
             max_gap_seconds = greatest(coalesce(f.max_gap_seconds, 0), missed.max_gap),
             last_message_id = coalesce(missed.last_message_id, f.last_message_id)
       WHERE f.tenant_id = missed.tenant_id AND f.key = missed.key AND f.created_at = missed.created_at;
      GET DIAGNOSTICS n = ROW_COUNT;
      updated := updated + n;
    END LOOP;
  END IF;
  RETURN updated;
END;
$$;
