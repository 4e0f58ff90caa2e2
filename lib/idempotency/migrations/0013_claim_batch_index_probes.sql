-- onceboard_claim_batch probes each key's index on its own: its NOT EXISTS became a hash anti-join over a whole new partition, cached while the partition looked empty
--
-- Stamped by `npm run db:stamp` from lib/idempotency/sql/ (onceboard_claim_batch.sql):
-- edit those sources, never this migration. Objects are named onceboard.<name>: migrate() rewrites that.

-- onceboard_claim_batch: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Many claims in one round trip and one commit, with the same decisions and the same answers per
-- key as single claims (claimed, duplicate, in flight, key reuse, … are results, not errors, so one
-- key's answer never fails another's). Each key has its own owner, so a key twice in one batch is
-- claimed once and reported in flight the second time. Keys are locked in the order of their
-- advisory-lock keys, so two batches that share keys take those locks in the same order and cannot
-- deadlock. The locks are held until the batch commits. A lock wait past p_lock_timeout_ms raises
-- (55P03) for the whole batch: the library then claims those keys one by one.
--
-- The usual batch is all fresh keys, so it is claimed set-wise: the try-locks are taken in lock
-- order up to the first key locked elsewhere (never holding a later lock while waiting for an
-- earlier one), then one INSERT … SELECT claims every locked key that has no row in any live
-- partition. That statement starts after the locks were taken, so its snapshot sees every claim
-- committed before them, as onceboard_claim's look does. Every other key (found, locked elsewhere,
-- a repeat within the batch, past the retention) goes through onceboard_claim in lock order, which
-- takes an advisory lock this transaction already holds at no cost and decides it exactly as a
-- single claim.
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
  n        integer := coalesce(cardinality(p_tenants), 0);
  ords     integer[];
  hashes   bigint[];
  locked   integer := 0;
  claimed  boolean[];
  fresh_ords integer[];
  ts       timestamptz;
  lease    timestamptz;
  i        integer;
  k        integer;
BEGIN
  IF cardinality(p_keys) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_owners) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_message_ids) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_request_hashes) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_require_existing) IS DISTINCT FROM cardinality(p_tenants) THEN
    RAISE EXCEPTION 'onceboard_claim_batch: the argument arrays differ in length';
  END IF;
  IF n = 0 THEN
    RETURN;
  END IF;
  -- As in onceboard_claim: the set-wise look below must not use a stale snapshot.
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'onceboard_claim cannot run inside a % transaction: its look into older partitions would use a stale snapshot',
      current_setting('transaction_isolation')
      USING ERRCODE = 'OB001', DETAIL = current_setting('transaction_isolation'),
            HINT = 'claim in a READ COMMITTED transaction (the default)';
  END IF;

  SELECT array_agg(u.o::integer ORDER BY u.h, u.o), array_agg(u.h ORDER BY u.h, u.o)
    INTO ords, hashes
    FROM (SELECT t.o, hashtextextended(t.tenant || chr(1) || t.key, 0) AS h
            FROM unnest(p_tenants, p_keys) WITH ORDINALITY AS t(tenant, key, o)) u;

  FOR k IN 1..n LOOP
    EXIT WHEN NOT pg_try_advisory_xact_lock(hashes[k]);
    locked := k;
  END LOOP;

  claimed := array_fill(false, ARRAY[n]);
  IF locked > 0 THEN
    ts := date_trunc('milliseconds', clock_timestamp());
    lease := ts + p_lease_ms * interval '1 millisecond';
    WITH firsts AS (
      -- A key's first occurrence in lock order; a repeat within the batch is left to onceboard_claim.
      SELECT DISTINCT ON (p_tenants[o], p_keys[o]) o
        FROM unnest(ords[1:locked]) AS o
       ORDER BY p_tenants[o], p_keys[o], o
    ), fresh AS MATERIALIZED (
      -- One index probe per key, as a subquery the planner cannot turn into a join: as NOT EXISTS
      -- it became a hash anti-join over the partition's every row whenever the cached plan was made
      -- while the partition was new and looked empty (a new day's partition, every morning), and the
      -- scan grew with the partition until autovacuum analyzed it (docs/benchmarks.md: batched
      -- claims fell from 8,500/s to 1,700/s within 15 s of a fresh partition).
      SELECT c.o FROM firsts c
       WHERE NOT coalesce(p_require_existing[c.o], false)
         AND (SELECT true FROM onceboard.effects f
               WHERE f.tenant_id = p_tenants[c.o] AND f.key = p_keys[c.o]
                 AND f.created_at <= ts + interval '1 day'
               LIMIT 1) IS NULL
    ), inserted AS (
      INSERT INTO onceboard.effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until,
                           first_message_id, last_message_id, request_hash, created_at, updated_at, demo)
      SELECT p_tenants[o], p_keys[o], p_job_type, 'in_progress', p_policy, 1, p_owners[o], lease,
             p_message_ids[o], p_message_ids[o], p_request_hashes[o], ts, ts, p_demo
        FROM fresh
    )
    SELECT array_agg(o) INTO fresh_ords FROM fresh;
    IF fresh_ords IS NOT NULL THEN
      FOREACH i IN ARRAY fresh_ords LOOP
        claimed[i] := true;
        ord := i;
        claim := ROW('claimed', 'in_progress', 1, p_owners[i], p_policy, ts, lease, NULL, NULL, NULL, 0, p_message_ids[i], ts);
        RETURN NEXT;
      END LOOP;
    END IF;
  END IF;

  FOR k IN 1..n LOOP
    i := ords[k];
    CONTINUE WHEN claimed[i];
    ord := i;
    claim := onceboard.onceboard_claim(p_tenants[i], p_keys[i], p_job_type, p_policy, p_owners[i], p_message_ids[i],
                             p_request_hashes[i], p_lease_ms, p_lock_timeout_ms, p_require_existing[i], p_demo);
    RETURN NEXT;
  END LOOP;
END;
$$;
