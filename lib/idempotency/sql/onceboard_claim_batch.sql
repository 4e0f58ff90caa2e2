-- onceboard_claim_batch: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Many claims in one round trip and one commit: onceboard_claim for each (tenant, key), with the
-- same decisions and the same answers per key as single claims (claimed, duplicate, in flight,
-- key reuse, … are results, not errors, so one key's answer never fails another's). Each key has
-- its own owner, so a key twice in one batch is claimed once and reported in flight the second
-- time. Keys are claimed in the order of their advisory-lock keys, so two batches that share keys
-- take those locks in the same order and cannot deadlock. The locks are held until the batch
-- commits. A lock wait past p_lock_timeout_ms raises (55P03) for the whole batch: the library
-- then claims those keys one by one.
CREATE OR REPLACE FUNCTION onceboard.onceboard_claim_batch(
  p_tenants           text[],
  p_keys              text[],
  p_job_type          text,
  p_policy            text,
  p_owners            text[],
  p_message_ids       text[],
  p_request_hashes    text[],
  p_lease_ms          integer,
  p_lock_timeout_ms   integer,
  p_require_existing  boolean[],
  p_demo              boolean
)
RETURNS TABLE (ord integer, claim onceboard.onceboard_claim_result)
LANGUAGE plpgsql AS $$
DECLARE
  i integer;
BEGIN
  IF cardinality(p_keys) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_owners) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_message_ids) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_request_hashes) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_require_existing) IS DISTINCT FROM cardinality(p_tenants) THEN
    RAISE EXCEPTION 'onceboard_claim_batch: the argument arrays differ in length';
  END IF;
  FOR i IN
    SELECT u.o::integer FROM unnest(p_tenants, p_keys) WITH ORDINALITY AS u(t, k, o)
     ORDER BY hashtextextended(u.t || chr(1) || u.k, 0), u.o
  LOOP
    ord := i;
    claim := onceboard.onceboard_claim(p_tenants[i], p_keys[i], p_job_type, p_policy, p_owners[i], p_message_ids[i],
                             p_request_hashes[i], p_lease_ms, p_lock_timeout_ms, p_require_existing[i], p_demo);
    RETURN NEXT;
  END LOOP;
END;
$$;
