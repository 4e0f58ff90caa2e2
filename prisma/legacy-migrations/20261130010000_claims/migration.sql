-- The worker library's claim: one SQL round trip that decides, atomically, whether this delivery
-- owns an effect. See lib/idempotency/claim-sql.ts for the caller and docs/worker-library.md for
-- the contract.

CREATE TYPE onceboard_claim_result AS (
  -- claimed | takeover | retry | duplicate | abandoned | in_flight | key_reuse | retention_expired
  result            text,
  status            text,
  attempt           integer,
  owner             text,
  policy            text,
  created_at        timestamptz,
  lease_until       timestamptz,
  outcome           jsonb,
  error             text,
  gap_seconds       double precision,
  duplicate_count   integer,
  first_message_id  text,
  db_now            timestamptz
);

-- Why a function and an advisory lock rather than INSERT … ON CONFLICT:
-- effects is partitioned by day on created_at, and PostgreSQL cannot enforce a unique index that
-- does not contain the partition key. The per-partition unique index on (tenant_id, key) catches
-- duplicates within one day only; a retry that lands after midnight would insert a second row in
-- the next partition. So every claimer of one (tenant, key) first takes a transaction-level
-- advisory lock on a hash of it, which serialises them, and only then looks across all
-- partitions. The lock is released when the claim's transaction ends, i.e. after its row is
-- visible, so the next claimer's lookup (a new statement, hence a new READ COMMITTED snapshot)
-- sees it.
--
-- Why it refuses REPEATABLE READ / SERIALIZABLE: under those levels the lookup uses the
-- transaction's first snapshot, which predates claims committed since; a duplicate in another
-- partition would be missed (reproduced on PostgreSQL 15). The library maps SQLSTATE OB001 to
-- IsolationLevelError.
--
-- Why lock_timeout: a claim made inside a caller's transaction (policy transactional) holds the
-- advisory lock until that transaction ends. A duplicate waits for it at most p_lock_timeout_ms,
-- then fails with 55P03, which the library reports as in-flight. The setting is restored right
-- after the lock is taken so it does not leak into the caller's transaction.
CREATE FUNCTION onceboard_claim(
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
BEGIN
  IF iso <> 'read committed' THEN
    RAISE EXCEPTION 'onceboard_claim cannot run inside a % transaction: its look into older partitions would use a stale snapshot', iso
      USING ERRCODE = 'OB001', DETAIL = iso, HINT = 'claim in a READ COMMITTED transaction (the default)';
  END IF;

  saved := current_setting('lock_timeout');
  PERFORM set_config('lock_timeout', greatest(p_lock_timeout_ms, 1)::text || 'ms', true);
  PERFORM pg_advisory_xact_lock(hashtextextended(p_tenant || chr(1) || p_key, 0));
  PERFORM set_config('lock_timeout', saved, true);

  -- At most a few iterations: we loop only when a completion (which does not take the advisory
  -- lock) changed the row between our read and our conditional update.
  LOOP
    ts := date_trunc('milliseconds', clock_timestamp());
    r.db_now := ts;

    SELECT f.status, f.attempt, f.owner, f.policy, f.created_at, f.lease_until, f.outcome, f.error,
           f.request_hash, f.duplicate_count, f.first_message_id
      INTO e
      FROM effects f
     WHERE f.tenant_id = p_tenant AND f.key = p_key
     ORDER BY f.created_at
     LIMIT 1;

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

    IF e.status IN ('completed', 'abandoned') THEN
      UPDATE effects f
         SET duplicate_count = f.duplicate_count + 1,
             last_duplicate_at = ts,
             last_message_id = coalesce(p_message_id, f.last_message_id),
             max_gap_seconds = greatest(coalesce(f.max_gap_seconds, 0), r.gap_seconds)
       WHERE f.tenant_id = p_tenant AND f.key = p_key AND f.created_at = e.created_at
      RETURNING f.duplicate_count INTO r.duplicate_count;
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
