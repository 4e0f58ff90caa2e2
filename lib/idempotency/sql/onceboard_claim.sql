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
-- p_completed writes a new row already completed, with an empty outcome and no lease: only for a
-- claim inside a transaction that its caller rolls back whenever the step does not succeed (the
-- library's own transaction for a transactional step), where the row commits with the step's writes
-- or vanishes with them, so no one ever sees it half done. The claim is still answered 'claimed'
-- (status 'completed' tells the caller the row was written so, and lease_until the claim's lease);
-- the caller then writes a non-empty outcome over the empty one, or nothing at all (issue 42: the
-- completion's UPDATE was half of a transactional step's database time).
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
  p_marked            boolean,
  p_completed         boolean DEFAULT false
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
      IF p_completed THEN
        INSERT INTO onceboard.effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until,
                             first_message_id, last_message_id, request_hash, created_at, updated_at, completed_at, marked)
        VALUES (p_tenant, p_key, p_job_type, 'completed', p_policy, 1, p_owner, NULL,
                p_message_id, p_message_id, p_request_hash, ts, ts, ts, p_marked);
        r := ROW('claimed', 'completed', 1, p_owner, p_policy, ts, lease, NULL, NULL, NULL, 0, p_message_id, ts);
        RETURN r;
      END IF;
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
