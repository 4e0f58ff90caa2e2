-- onceboard_claim_tenant: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- One tenant's share of a batch of claims, for Citus (lib/idempotency/citus.ts): distributed by
-- p_tenant and co-located with effects, the call runs on the worker holding the tenant's shard, so
-- every advisory lock it takes is on the node every other claim of that tenant locks on. The set-wise
-- onceboard_claim_batch cannot be planned there (its statements name tenants from arrays, which
-- Citus cannot route), so each key goes through onceboard_claim, called here on the worker: the
-- same decision and the same answer as a single claim. Keys are claimed in the order of their
-- advisory-lock keys and every lock is held until the call commits, so two calls sharing keys cannot
-- deadlock, as with onceboard_claim_batch; a lock wait past p_lock_timeout_ms raises (55P03) for the
-- whole call, and the library then claims those keys one by one. On a Citus coordinator it refuses
-- to run (OB002): its locks would not serialise with the workers'.
CREATE OR REPLACE FUNCTION onceboard.onceboard_claim_tenant(
  p_tenant            text,
  p_keys              text[],
  p_job_type          text,
  p_policy            text,
  p_owners            text[],
  p_message_ids       text[],
  p_request_hashes    text[],
  p_lease_ms          integer,
  p_lock_timeout_ms   integer,
  p_require_existing  boolean[],
  p_marked            boolean
)
RETURNS TABLE (ord integer, claim onceboard.onceboard_claim_result)
LANGUAGE plpgsql
AS $$
DECLARE
  n integer := coalesce(cardinality(p_keys), 0);
  i integer;
BEGIN
  IF cardinality(p_owners) IS DISTINCT FROM n OR cardinality(p_message_ids) IS DISTINCT FROM n
     OR cardinality(p_request_hashes) IS DISTINCT FROM n OR cardinality(p_require_existing) IS DISTINCT FROM n THEN
    RAISE EXCEPTION 'onceboard_claim_tenant: the argument arrays differ in length';
  END IF;
  IF (SELECT g.groupid FROM pg_catalog.pg_dist_local_group g) = 0 THEN
    RAISE EXCEPTION 'onceboard_claim_tenant ran on the Citus coordinator, not on the worker holding tenant %', p_tenant
      USING ERRCODE = 'OB002', HINT = 'distribute it: npm run db:migrate -- --citus';
  END IF;
  FOR i IN SELECT o FROM generate_series(1, n) AS o
            ORDER BY hashtextextended(p_tenant || chr(1) || p_keys[o], 0), o LOOP
    ord := i;
    claim := onceboard.onceboard_claim(p_tenant, p_keys[i], p_job_type, p_policy, p_owners[i], p_message_ids[i],
                                       p_request_hashes[i], p_lease_ms, p_lock_timeout_ms, p_require_existing[i], p_marked);
    RETURN NEXT;
  END LOOP;
END;
$$;
