-- The claim functions write effects.marked (options.marked, a general option) where they wrote demo; the
-- library's tables call the column marked. Parameter names cannot change in CREATE OR REPLACE, so the
-- three claim functions are dropped and created again (on Citus, npm run db:migrate -- --citus
-- distributes the new ones). The renames and drops are written here by hand, before the stamped functions.
--
-- Stamped by `npm run db:stamp` from lib/idempotency/sql/ (onceboard_claim.sql, onceboard_claim_batch.sql, onceboard_claim_tenant.sql):
-- edit those sources, never this migration. Objects are named onceboard.<name>: migrate() rewrites that.

-- Renaming is a catalog change (no table rewrite); each table's keys and indexes follow the column.
ALTER TABLE onceboard.effects RENAME COLUMN demo TO marked;
ALTER TABLE onceboard.worker_stats_minute RENAME COLUMN demo TO marked;
ALTER TABLE onceboard.claim_latency_minute RENAME COLUMN demo TO marked;
ALTER TABLE onceboard.uncaught_violations_minute RENAME COLUMN demo TO marked;
ALTER TABLE onceboard.uncaught_violation_keys RENAME COLUMN demo TO marked;
ALTER TABLE onceboard.tenant_suppressions_hour RENAME COLUMN demo TO marked;
ALTER TABLE onceboard.tenant_violations_hour RENAME COLUMN demo TO marked;
ALTER TABLE onceboard.delivery_timeline RENAME COLUMN demo TO marked;

DROP FUNCTION onceboard.onceboard_claim_tenant(text, text[], text, text, text[], text[], text[], integer, integer, boolean[], boolean);
DROP FUNCTION onceboard.onceboard_claim_batch(text[], text[], text, text, text[], text[], text[], integer, integer, boolean[], boolean);
DROP FUNCTION onceboard.onceboard_claim(text, text, text, text, text, text, text, integer, integer, boolean, boolean);

-- onceboard_claim: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- One claim, one round trip: refuse a stale snapshot (OB001), serialise claimers of one
-- (tenant, key) on a transaction-level advisory lock, look across the live partitions, then insert,
-- take over an expired lease or a failed attempt, mark an at-most-once claim abandoned, or answer
-- duplicate / in flight / key reuse / retention expired. Without waiting on the lock, a completed
-- or abandoned row (immutable) is answered at once. The advisory-lock key
-- hashtextextended(tenant || chr(1) || key, 0) must never change: claims from libraries built
-- against earlier migrations must stay serialised with these. Plans are pinned as
-- onceboard_claim_batch's are (one generic plan per session, index probes only), for its reasons.
CREATE OR REPLACE FUNCTION onceboard.onceboard_claim(
  p_tenant            text,
  p_key               text,
  p_job_type          text,
  p_policy            text,
  p_owner             text,
  p_message_id        text,
  p_request_hash      text,
  p_lease_ms          integer,
  p_lock_timeout_ms   integer,
  p_require_existing  boolean,
  p_marked            boolean
)
RETURNS onceboard.onceboard_claim_result
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
DECLARE
  r        onceboard.onceboard_claim_result;
  e        record;
  saved    text;
  ts       timestamptz;
  lease    timestamptz;
  gap      double precision;
  n        integer;
  lock_key bigint;
BEGIN
  -- Under REPEATABLE READ / SERIALIZABLE the look below would use a stale snapshot and could miss
  -- a claim committed in another partition: refuse (the library maps OB001 to IsolationLevelError).
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'onceboard_claim cannot run inside a % transaction: its look into older partitions would use a stale snapshot',
      current_setting('transaction_isolation')
      USING ERRCODE = 'OB001', DETAIL = current_setting('transaction_isolation'),
            HINT = 'claim in a READ COMMITTED transaction (the default)';
  END IF;

  lock_key := hashtextextended(p_tenant || chr(1) || p_key, 0);
  IF NOT pg_try_advisory_xact_lock(lock_key) THEN
    -- Someone holds the lock. A completed or abandoned row never changes: answer without waiting.
    ts := date_trunc('milliseconds', clock_timestamp());
    SELECT f.status, f.attempt, f.owner, f.policy, f.created_at, f.lease_until, f.outcome, f.error,
           f.request_hash, f.duplicate_count, f.first_message_id
      INTO e
      FROM onceboard.effects f
     WHERE f.tenant_id = p_tenant AND f.key = p_key AND f.created_at <= ts + interval '1 day'
       AND f.status IN ('completed', 'abandoned');
    IF FOUND THEN
      r := ROW(NULL, e.status, e.attempt, e.owner, e.policy, e.created_at, e.lease_until, e.outcome, e.error,
               extract(epoch FROM ts - e.created_at), e.duplicate_count, e.first_message_id, ts);
      r.result := CASE WHEN p_request_hash IS NOT NULL AND e.request_hash IS NOT NULL AND e.request_hash <> p_request_hash
                       THEN 'key_reuse' ELSE 'duplicate' END;
      RETURN r;
    END IF;
    saved := current_setting('lock_timeout');
    PERFORM set_config('lock_timeout', greatest(p_lock_timeout_ms, 1)::text || 'ms', true);
    PERFORM pg_advisory_xact_lock(lock_key);
    PERFORM set_config('lock_timeout', saved, true);
  END IF;

  -- At most a few iterations: we loop only when a completion (which does not take the advisory
  -- lock) changed the row between our read and our conditional update.
  LOOP
    ts := date_trunc('milliseconds', clock_timestamp());
    lease := ts + p_lease_ms * interval '1 millisecond';

    -- At most one row per (tenant, key) across partitions (the advisory lock). Bounded above so
    -- the premade future partitions are pruned at executor start; one day ahead so a row dated
    -- before the database clock stepped back (up to 24 h) is still seen.
    SELECT f.status, f.attempt, f.owner, f.policy, f.created_at, f.lease_until, f.outcome, f.error,
           f.request_hash, f.duplicate_count, f.first_message_id
      INTO e
      FROM onceboard.effects f
     WHERE f.tenant_id = p_tenant AND f.key = p_key AND f.created_at <= ts + interval '1 day';

    IF NOT FOUND THEN
      -- The delivery is older than the retention: its record may have been pruned, so "not found"
      -- does not prove it never ran. Refuse rather than run it again.
      IF p_require_existing THEN
        r := ROW('retention_expired', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ts);
        RETURN r;
      END IF;
      -- created_at is truncated to milliseconds so a JavaScript Date names the row exactly.
      INSERT INTO onceboard.effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until,
                           first_message_id, last_message_id, request_hash, created_at, updated_at, marked)
      VALUES (p_tenant, p_key, p_job_type, 'in_progress', p_policy, 1, p_owner, lease,
              p_message_id, p_message_id, p_request_hash, ts, ts, p_marked);
      r := ROW('claimed', 'in_progress', 1, p_owner, p_policy, ts, lease, NULL, NULL, NULL, 0, p_message_id, ts);
      RETURN r;
    END IF;

    gap := extract(epoch FROM ts - e.created_at);
    r := ROW(NULL, e.status, e.attempt, e.owner, e.policy, e.created_at, e.lease_until, e.outcome, e.error, gap,
             e.duplicate_count, e.first_message_id, ts);

    IF p_request_hash IS NOT NULL AND e.request_hash IS NOT NULL AND e.request_hash <> p_request_hash THEN
      r.result := 'key_reuse';
      RETURN r;
    END IF;

    -- Read-only on purpose: the library batches the duplicate bookkeeping
    -- (lib/idempotency/duplicates.ts), so a duplicate's claim commits without a WAL flush.
    IF e.status IN ('completed', 'abandoned') THEN
      r.result := 'duplicate';
      RETURN r;
    END IF;

    IF e.status = 'in_progress' AND e.owner = p_owner THEN
      -- Our own claim, seen again because the library retried a claim whose reply was lost.
      r.result := 'claimed';
      RETURN r;
    END IF;

    IF e.status = 'in_progress' AND e.lease_until > ts THEN
      r.result := 'in_flight';
      RETURN r;
    END IF;

    IF e.status = 'in_progress' AND e.policy = 'at_most_once' THEN
      -- A worker died between claim and completion of an at-most-once step: it may or may not
      -- have sent. By design we never send again; the claim is marked abandoned.
      UPDATE onceboard.effects f
         SET status = 'abandoned', attempt = f.attempt + 1, owner = p_owner, lease_until = NULL,
             completed_at = ts, updated_at = ts, last_message_id = coalesce(p_message_id, f.last_message_id),
             error = 'abandoned: lease of attempt ' || f.attempt || ' (' || coalesce(f.owner, '?') || ') expired'
       WHERE f.tenant_id = p_tenant AND f.key = p_key AND f.created_at = e.created_at
         AND f.status = 'in_progress' AND f.attempt = e.attempt
      RETURNING f.attempt, f.error INTO r.attempt, r.error;
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n = 1 THEN
        r.result := 'abandoned'; r.status := 'abandoned'; r.owner := p_owner; r.lease_until := NULL;
        RETURN r;
      END IF;
      CONTINUE;
    END IF;

    -- An expired lease (the owner crashed) or a failed attempt: exactly one claimer, the one
    -- holding the advisory lock, takes it over with attempt + 1. The attempt/status guard makes a
    -- completion that landed after our read win.
    UPDATE onceboard.effects f
       SET status = 'in_progress', attempt = f.attempt + 1, owner = p_owner,
           lease_until = lease, updated_at = ts, error = NULL,
           last_message_id = coalesce(p_message_id, f.last_message_id)
     WHERE f.tenant_id = p_tenant AND f.key = p_key AND f.created_at = e.created_at
       AND f.status = e.status AND f.attempt = e.attempt
    RETURNING f.attempt, f.lease_until INTO r.attempt, r.lease_until;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 1 THEN
      r.result := CASE WHEN e.status = 'failed' THEN 'retry' ELSE 'takeover' END;
      r.status := 'in_progress'; r.owner := p_owner; r.error := NULL;
      RETURN r;
    END IF;
  END LOOP;
END;
$$;
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
