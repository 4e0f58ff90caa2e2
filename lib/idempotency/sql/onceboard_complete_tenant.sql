-- onceboard_complete_tenant: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- One tenant's completions, for Citus (lib/idempotency/citus.ts): distributed by p_tenant and
-- co-located with effects, so it runs on the worker holding the tenant's shard. Each row is named
-- and guarded exactly as a single completion names it (complete-sql.ts) and a completed row keeps
-- its outcome, error and completed_at; it returns the claims still ours, by their whole ref. The
-- time is taken once into a variable: Citus refuses a volatile function (clock_timestamp()) in an
-- UPDATE on a distributed table, and any non-immutable one inside CASE. Rows are updated in key
-- order, so two calls sharing keys cannot deadlock.
CREATE OR REPLACE FUNCTION onceboard.onceboard_complete_tenant(
  p_tenant      text,
  p_keys        text[],
  p_created_at  timestamptz[],
  p_owners      text[],
  p_attempts    integer[],
  p_outcomes    jsonb[],
  p_errors      text[]
)
RETURNS TABLE (o_tenant_id text, o_key text, o_owner text, o_attempt integer)
LANGUAGE plpgsql
AS $$
DECLARE
  ts timestamptz := clock_timestamp();
  i  integer;
BEGIN
  FOR i IN SELECT o FROM generate_series(1, coalesce(cardinality(p_keys), 0)) AS o ORDER BY p_keys[o], o LOOP
    RETURN QUERY
    UPDATE onceboard.effects e
       SET outcome = CASE WHEN e.status = 'completed' THEN e.outcome ELSE p_outcomes[i] END,
           error = CASE WHEN e.status = 'completed' THEN e.error ELSE p_errors[i] END,
           completed_at = CASE WHEN e.status = 'completed' THEN e.completed_at ELSE ts END,
           status = 'completed', lease_until = NULL, updated_at = ts
     WHERE e.tenant_id = p_tenant AND e.key = p_keys[i] AND e.created_at = p_created_at[i]
       AND e.owner = p_owners[i] AND e.attempt = p_attempts[i] AND e.status IN ('in_progress', 'completed')
    RETURNING e.tenant_id, e.key, e.owner, e.attempt;
  END LOOP;
END;
$$;
