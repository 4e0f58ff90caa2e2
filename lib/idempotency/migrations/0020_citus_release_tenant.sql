-- the console's release of a stuck claim as one function, for Citus to delegate to the tenant's worker
--
-- Stamped by `npm run db:stamp` from lib/idempotency/sql/ (onceboard_release_tenant.sql):
-- edit those sources, never this migration. Objects are named onceboard.<name>: migrate() rewrites that.

-- onceboard_release_tenant: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The console's release of a stuck claim (release.ts), for Citus (lib/idempotency/citus.ts):
-- distributed by p_tenant and co-located with effects, so it runs on the worker holding the tenant's
-- shard and takes the claim's advisory lock there, where onceboard_claim takes it; a lock taken on
-- the coordinator would not keep a release and a takeover apart. The same guards and the same error
-- text as the one-server statements (release-sql.ts), with the time taken once into a variable:
-- Citus refuses a volatile function in an UPDATE on a distributed table, and any non-immutable one
-- inside CASE. One row: released, or the effect the refusal found (no row: no such effect).
CREATE OR REPLACE FUNCTION onceboard.onceboard_release_tenant(
  p_tenant       text,
  p_key          text,
  p_released_by  text,
  p_force        boolean
)
RETURNS TABLE (released boolean, status text, policy text, lease_until timestamptz, owner text, attempt integer)
LANGUAGE plpgsql
AS $$
DECLARE
  ts timestamptz := clock_timestamp();
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_tenant || chr(1) || p_key, 0));
  RETURN QUERY
  UPDATE onceboard.effects e
     SET status = 'failed', lease_until = NULL, updated_at = ts,
         error = 'released by ' || p_released_by || CASE WHEN e.lease_until <= ts
           THEN ' after the lease of attempt ' || e.attempt || ' (' || coalesce(e.owner, '?') || ') expired'
           ELSE ' while the lease of attempt ' || e.attempt || ' (' || coalesce(e.owner, '?') || ') was alive' END
   WHERE e.tenant_id = p_tenant AND e.key = p_key AND e.created_at <= ts + interval '1 minute'
     AND e.status = 'in_progress' AND e.policy <> 'at_most_once'
     AND (p_force OR e.lease_until <= ts)
  RETURNING true, e.status, e.policy, e.lease_until, e.owner, e.attempt;
  IF FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY
  SELECT false, e.status, e.policy, e.lease_until, e.owner, e.attempt
    FROM onceboard.effects e
   WHERE e.tenant_id = p_tenant AND e.key = p_key AND e.created_at <= ts + interval '1 minute'
   LIMIT 1;
END;
$$;
