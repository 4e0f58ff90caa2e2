-- onceboard_apply_tenant_duplicates: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- One tenant's share of the duplicate ledger's flush, for Citus (lib/idempotency/citus.ts): on the
-- tenant's worker (distributed by p_tenant, co-located with effects), where onceboard_apply_duplicates,
-- whose one UPDATE joins rows of many tenants, cannot be planned. Each entry adds its duplicates to
-- its row as onceboard_apply_duplicates adds them, rows in key order. Entries of another tenant are
-- ignored. Returns how many rows it updated.
CREATE OR REPLACE FUNCTION onceboard.onceboard_apply_tenant_duplicates(p_tenant text, p_duplicates jsonb)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
  d       record;
  n       integer;
  updated integer := 0;
BEGIN
  FOR d IN SELECT * FROM jsonb_to_recordset(p_duplicates)
                    AS j(tenant_id text, key text, created_at timestamptz, n integer, last_at timestamptz,
                         max_gap double precision, last_message_id text)
            WHERE j.tenant_id = p_tenant
            ORDER BY j.key LOOP
    UPDATE onceboard.effects f
       SET duplicate_count = f.duplicate_count + d.n,
           last_duplicate_at = greatest(f.last_duplicate_at, d.last_at),
           max_gap_seconds = greatest(coalesce(f.max_gap_seconds, 0), d.max_gap),
           last_message_id = coalesce(d.last_message_id, f.last_message_id)
     WHERE f.tenant_id = p_tenant AND f.key = d.key AND f.created_at = d.created_at;
    GET DIAGNOSTICS n = ROW_COUNT;
    updated := updated + n;
  END LOOP;
  RETURN updated;
END;
$$;
