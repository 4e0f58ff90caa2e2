-- onceboard_fail_tenant: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- One tenant's failed (p_status 'failed') or abandoned (p_status 'abandoned') attempts, for Citus
-- (lib/idempotency/citus.ts), as onceboard_complete_tenant completes them: on the tenant's worker,
-- each row named and guarded as a single claim.fail() / abandon names it (complete-sql.ts), the time
-- taken once into a variable, rows in key order. Returns the claims still ours, by their whole ref.
CREATE OR REPLACE FUNCTION onceboard.onceboard_fail_tenant(
  p_tenant      text,
  p_keys        text[],
  p_created_at  timestamptz[],
  p_owners      text[],
  p_attempts    integer[],
  p_errors      text[],
  p_status      text
)
RETURNS TABLE (o_tenant_id text, o_key text, o_owner text, o_attempt integer)
LANGUAGE plpgsql
AS $$
DECLARE
  ts timestamptz := clock_timestamp();
  i  integer;
BEGIN
  IF p_status NOT IN ('failed', 'abandoned') THEN
    RAISE EXCEPTION 'onceboard_fail_tenant: p_status must be failed or abandoned, got %', p_status;
  END IF;
  FOR i IN SELECT o FROM generate_series(1, coalesce(cardinality(p_keys), 0)) AS o ORDER BY p_keys[o], o LOOP
    RETURN QUERY
    UPDATE onceboard.effects e
       SET status = p_status, error = p_errors[i], lease_until = NULL, updated_at = ts
     WHERE e.tenant_id = p_tenant AND e.key = p_keys[i] AND e.created_at = p_created_at[i]
       AND e.owner = p_owners[i] AND e.attempt = p_attempts[i] AND e.status IN ('in_progress', p_status)
    RETURNING e.tenant_id, e.key, e.owner, e.attempt;
  END LOOP;
END;
$$;
