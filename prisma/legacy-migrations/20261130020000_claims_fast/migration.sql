-- onceboard_claim, second version: the same decisions, measured cheaper (bench/claims.ts,
-- docs/benchmarks.md). Changes from 20261130010000_claims:
-- * The advisory lock is tried first (pg_try_advisory_xact_lock); only a claimer that has to wait
--   pays for setting and restoring lock_timeout.
-- * The look across partitions has no ORDER BY … LIMIT (a MergeAppend over every partition):
--   there is at most one row per (tenant, key), and a plain Append stops at the first row.
-- * It is bounded above by now + 1 minute, so the premade future partitions (always empty for
--   this key: rows are stamped with the claimer's clock) are pruned at executor start.
-- * A duplicate of a completed effect no longer writes the row: the claim is read-only, so it
--   commits without a WAL flush (measured ~3x faster), and a redelivery storm does not become a
--   write storm on effects. The per-row bookkeeping (duplicate_count, last_duplicate_at,
--   max_gap_seconds) is batched by the library: one UPDATE per flush for all duplicates seen
--   (lib/idempotency/duplicates.ts), so those columns lag by at most the flush interval.

-- Why a function and an advisory lock rather than INSERT … ON CONFLICT: see
-- 20261130010000_claims. In short, PostgreSQL cannot enforce uniqueness across the daily
-- partitions, so claimers of one (tenant, key) serialise on an advisory lock, then look across
-- partitions, then insert, in one transaction and one round trip. Refuses REPEATABLE READ /
-- SERIALIZABLE (SQLSTATE OB001): the look would use a stale snapshot.
CREATE OR REPLACE FUNCTION onceboard_claim(
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
  p_demo              boolean
)
RETURNS onceboard_claim_result
LANGUAGE plpgsql AS $$
DECLARE
  r        onceboard_claim_result;
  e        record;
  iso      text := current_setting('transaction_isolation');
  saved    text;
  ts       timestamptz;
  n        integer;
  lock_key bigint;
BEGIN
  IF iso <> 'read committed' THEN
    RAISE EXCEPTION 'onceboard_claim cannot run inside a % transaction: its look into older partitions would use a stale snapshot', iso
      USING ERRCODE = 'OB001', DETAIL = iso, HINT = 'claim in a READ COMMITTED transaction (the default)';
  END IF;

  lock_key := hashtextextended(p_tenant || chr(1) || p_key, 0);
  IF NOT pg_try_advisory_xact_lock(lock_key) THEN
    saved := current_setting('lock_timeout');
    PERFORM set_config('lock_timeout', greatest(p_lock_timeout_ms, 1)::text || 'ms', true);
    PERFORM pg_advisory_xact_lock(lock_key);
    PERFORM set_config('lock_timeout', saved, true);
  END IF;

  -- At most a few iterations: we loop only when a completion (which does not take the advisory
  -- lock) changed the row between our read and our conditional update.
  LOOP
    ts := date_trunc('milliseconds', clock_timestamp());
    r.db_now := ts;

    SELECT f.status, f.attempt, f.owner, f.policy, f.created_at, f.lease_until, f.outcome, f.error,
           f.request_hash, f.duplicate_count, f.first_message_id
      INTO e
      FROM effects f
     WHERE f.tenant_id = p_tenant AND f.key = p_key AND f.created_at <= ts + interval '1 minute';

    IF NOT FOUND THEN
      -- The delivery is older than the retention: its record may have been pruned, so "not found"
      -- does not prove it never ran. Refuse rather than run it again.
      IF p_require_existing THEN
        r.result := 'retention_expired';
        RETURN r;
      END IF;
      -- created_at is truncated to milliseconds so a JavaScript Date names the row exactly.
      INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until,
                           first_message_id, last_message_id, request_hash, created_at, updated_at, demo)
      VALUES (p_tenant, p_key, p_job_type, 'in_progress', p_policy, 1, p_owner,
              ts + p_lease_ms * interval '1 millisecond', p_message_id, p_message_id, p_request_hash, ts, ts, p_demo);
      r.result := 'claimed'; r.status := 'in_progress'; r.attempt := 1; r.owner := p_owner; r.policy := p_policy;
      r.created_at := ts; r.lease_until := ts + p_lease_ms * interval '1 millisecond';
      r.duplicate_count := 0; r.first_message_id := p_message_id;
      RETURN r;
    END IF;

    r.status := e.status; r.attempt := e.attempt; r.owner := e.owner; r.policy := e.policy;
    r.created_at := e.created_at; r.lease_until := e.lease_until; r.outcome := e.outcome; r.error := e.error;
    r.duplicate_count := e.duplicate_count; r.first_message_id := e.first_message_id;
    r.gap_seconds := extract(epoch FROM ts - e.created_at);

    IF p_request_hash IS NOT NULL AND e.request_hash IS NOT NULL AND e.request_hash <> p_request_hash THEN
      r.result := 'key_reuse';
      RETURN r;
    END IF;

    -- Read-only on purpose: the library batches the duplicate bookkeeping (see the header).
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
      UPDATE effects f
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
    UPDATE effects f
       SET status = 'in_progress', attempt = f.attempt + 1, owner = p_owner,
           lease_until = ts + p_lease_ms * interval '1 millisecond', updated_at = ts, error = NULL,
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
