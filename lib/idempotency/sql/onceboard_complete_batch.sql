-- onceboard_complete_batch: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Many completions in one round trip and one commit (effects.completeMany, coalesced completions):
-- each row named and guarded exactly as a single completion names it; returns the claims still
-- ours, by their whole ref (a batch may hold a taken-over claim and its new owner's, of one key).
-- One UPDATE joined to the set, its plan pinned (the SET clauses, as onceboard_claim_batch's): a
-- nested loop over the claims in key order, one index probe each, so rows are locked in key order
-- and two batches sharing keys cannot deadlock. Left to choose, the planner hashed the partition
-- whenever the plan was cached while the day's partition looked empty (migration 0013), and
-- planned each statement again per call. The bounds on created_at let the executor prune every
-- partition the batch does not touch before it starts, where the join alone would open them all.
CREATE OR REPLACE FUNCTION onceboard.onceboard_complete_batch(
  p_tenants     text[],
  p_keys        text[],
  p_created_at  timestamptz[],
  p_owners      text[],
  p_attempts    integer[],
  p_outcomes    jsonb[],
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
     SET outcome = CASE WHEN e.status = 'completed' THEN e.outcome ELSE c.outcome END,
         error = CASE WHEN e.status = 'completed' THEN e.error ELSE c.error END,
         completed_at = CASE WHEN e.status = 'completed' THEN e.completed_at ELSE clock_timestamp() END,
         status = 'completed', lease_until = NULL, updated_at = clock_timestamp()
    FROM (SELECT * FROM unnest(p_tenants, p_keys, p_created_at, p_owners, p_attempts, p_outcomes, p_errors)
                          AS u(tenant_id, key, created_at, owner, attempt, outcome, error)
           ORDER BY u.tenant_id, u.key) c
   WHERE e.tenant_id = c.tenant_id AND e.key = c.key AND e.created_at = c.created_at
     AND e.created_at BETWEEN lo AND hi
     AND e.owner = c.owner AND e.attempt = c.attempt AND e.status IN ('in_progress', 'completed')
  RETURNING e.tenant_id, e.key, e.owner, e.attempt;
END;
$$;
