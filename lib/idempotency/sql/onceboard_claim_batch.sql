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
-- The usual batch is all fresh keys, or all keys done before (a redelivery), so both are decided
-- set-wise: the try-locks are taken in lock order up to the first key locked elsewhere (never
-- holding a later lock while waiting for an earlier one), then one statement probes every locked
-- key's index in the live partitions. That statement starts after the locks were taken, so its
-- snapshot sees every claim committed before them, as onceboard_claim's look does. A key with no
-- row is claimed by one INSERT … SELECT (its lock keeps every other claimer out meanwhile); a key
-- completed or abandoned is answered from the row it found (duplicate or key reuse, as
-- onceboard_claim answers it). Every other key (in progress, failed, locked elsewhere, a repeat
-- within the batch, past the retention) goes through onceboard_claim in lock order, which takes an
-- advisory lock this transaction already holds at no cost and decides it exactly as a single claim.
--
-- Plans are pinned (the SET clauses): one generic plan per session, index probes and nested loops
-- only. Left to choose, PostgreSQL planned the statements again on every call (a custom plan looked
-- cheaper than the generic one over every partition: a third of the database's time per claim in
-- bench:peers), and a plan made while a new day's partition looked empty could hash or scan that
-- partition whole once it had filled (migration 0013).
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
  p_marked            boolean
)
RETURNS TABLE (ord integer, claim onceboard.onceboard_claim_result)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
DECLARE
  n        integer := coalesce(cardinality(p_tenants), 0);
  ords     integer[];
  hashes   bigint[];
  locked   integer := 0;
  answered boolean[];
  fresh_ords integer[] := '{}';
  f        record;
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

  answered := array_fill(false, ARRAY[n]);
  IF locked > 0 THEN
    ts := date_trunc('milliseconds', clock_timestamp());
    lease := ts + p_lease_ms * interval '1 millisecond';
    -- A key's first occurrence in lock order (a repeat within the batch is left to onceboard_claim),
    -- with its row if it has one: one index probe per key and live partition, as a lateral subquery
    -- the pinned plan runs per key. Bounded above as onceboard_claim's look is.
    FOR f IN
      SELECT c.o, e.status, e.attempt, e.owner, e.policy, e.created_at, e.lease_until, e.outcome, e.error,
             e.request_hash, e.duplicate_count, e.first_message_id
        FROM (SELECT DISTINCT ON (p_tenants[o], p_keys[o]) o
                FROM unnest(ords[1:locked]) AS o
               ORDER BY p_tenants[o], p_keys[o], o) c
        LEFT JOIN LATERAL (
          SELECT x.status, x.attempt, x.owner, x.policy, x.created_at, x.lease_until, x.outcome, x.error,
                 x.request_hash, x.duplicate_count, x.first_message_id
            FROM onceboard.effects x
           WHERE x.tenant_id = p_tenants[c.o] AND x.key = p_keys[c.o] AND x.created_at <= ts + interval '1 day'
           LIMIT 1) e ON true
    LOOP
      IF f.status IS NULL THEN
        CONTINUE WHEN coalesce(p_require_existing[f.o], false);
        fresh_ords := fresh_ords || f.o;
      ELSIF f.status IN ('completed', 'abandoned') THEN
        -- Answered as onceboard_claim answers it: its duplicate is read-only, and so is this.
        answered[f.o] := true;
        ord := f.o;
        claim := ROW(CASE WHEN p_request_hashes[f.o] IS NOT NULL AND f.request_hash IS NOT NULL
                               AND f.request_hash <> p_request_hashes[f.o]
                          THEN 'key_reuse' ELSE 'duplicate' END,
                     f.status, f.attempt, f.owner, f.policy, f.created_at, f.lease_until, f.outcome, f.error,
                     extract(epoch FROM ts - f.created_at), f.duplicate_count, f.first_message_id, ts);
        RETURN NEXT;
      END IF;
    END LOOP;

    IF cardinality(fresh_ords) > 0 THEN
      INSERT INTO onceboard.effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until,
                           first_message_id, last_message_id, request_hash, created_at, updated_at, marked)
      SELECT p_tenants[o], p_keys[o], p_job_type, 'in_progress', p_policy, 1, p_owners[o], lease,
             p_message_ids[o], p_message_ids[o], p_request_hashes[o], ts, ts, p_marked
        FROM unnest(fresh_ords) AS o;
      FOREACH i IN ARRAY fresh_ords LOOP
        answered[i] := true;
        ord := i;
        claim := ROW('claimed', 'in_progress', 1, p_owners[i], p_policy, ts, lease, NULL, NULL, NULL, 0, p_message_ids[i], ts);
        RETURN NEXT;
      END LOOP;
    END IF;
  END IF;

  FOR k IN 1..n LOOP
    i := ords[k];
    CONTINUE WHEN answered[i];
    ord := i;
    claim := onceboard.onceboard_claim(p_tenants[i], p_keys[i], p_job_type, p_policy, p_owners[i], p_message_ids[i],
                             p_request_hashes[i], p_lease_ms, p_lock_timeout_ms, p_require_existing[i], p_marked);
    RETURN NEXT;
  END LOOP;
END;
$$;
