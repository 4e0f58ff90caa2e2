-- onceboard_fail_batch: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Many failures in one round trip and one commit (coalesced claim.fail() calls): each row named and
-- guarded exactly as a single failure names it; returns the claims still ours, by their whole ref.
-- One UPDATE joined to the set, its plan pinned, in key order: onceboard_complete_batch says why.
CREATE OR REPLACE FUNCTION onceboard.onceboard_fail_batch(
  p_tenants     text[],
  p_keys        text[],
  p_created_at  timestamptz[],
  p_owners      text[],
  p_attempts    integer[],
  p_errors      text[]
)
RETURNS TABLE (o_tenant_id text, o_key text, o_owner text, o_attempt integer)
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
BEGIN
  SELECT min(t), max(t) INTO lo, hi FROM unnest(p_created_at) AS t;
  RETURN QUERY
  UPDATE onceboard.effects e
     SET status = 'failed', error = c.error, lease_until = NULL, updated_at = clock_timestamp()
    FROM (SELECT * FROM unnest(p_tenants, p_keys, p_created_at, p_owners, p_attempts, p_errors)
                          AS u(tenant_id, key, created_at, owner, attempt, error)
           ORDER BY u.tenant_id, u.key) c
   WHERE e.tenant_id = c.tenant_id AND e.key = c.key AND e.created_at = c.created_at
     AND e.created_at BETWEEN lo AND hi
     AND e.owner = c.owner AND e.attempt = c.attempt AND e.status IN ('in_progress', 'failed')
  RETURNING e.tenant_id, e.key, e.owner, e.attempt;
END;
$$;
