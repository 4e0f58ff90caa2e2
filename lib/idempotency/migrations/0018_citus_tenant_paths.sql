-- one tenant's claims, completions, failures and duplicate bookkeeping per call, for Citus to delegate to the tenant's worker
--
-- Stamped by `npm run db:stamp` from lib/idempotency/sql/ (onceboard_apply_tenant_duplicates.sql, onceboard_claim_tenant.sql, onceboard_complete_tenant.sql, onceboard_fail_tenant.sql):
-- edit those sources, never this migration. Objects are named onceboard.<name>: migrate() rewrites that.

-- onceboard_apply_tenant_duplicates: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- One tenant's share of the duplicate ledger's flush, for Citus (lib/idempotency/citus.ts): on the
-- tenant's worker (distributed by p_tenant, co-located with effects), where onceboard_apply_duplicates,
-- whose one UPDATE joins rows of many tenants, cannot be planned. Each entry adds its duplicates to
-- its row as onceboard_apply_duplicates adds them, rows in key order. Entries of another tenant are
-- ignored. Returns how many rows it updated.
CREATE OR REPLACE FUNCTION onceboard.onceboard_apply_tenant_duplicates(p_tenant text, p_duplicates jsonb)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
  d       record;
  n       integer;
  updated integer := 0;
BEGIN
  FOR d IN SELECT * FROM jsonb_to_recordset(p_duplicates)
                    AS j(tenant_id text, key text, created_at timestamptz, n integer, last_at timestamptz,
                         max_gap double precision, last_message_id text)
            WHERE j.tenant_id = p_tenant
            ORDER BY j.key LOOP
    UPDATE onceboard.effects f
       SET duplicate_count = f.duplicate_count + d.n,
           last_duplicate_at = greatest(f.last_duplicate_at, d.last_at),
           max_gap_seconds = greatest(coalesce(f.max_gap_seconds, 0), d.max_gap),
           last_message_id = coalesce(d.last_message_id, f.last_message_id)
     WHERE f.tenant_id = p_tenant AND f.key = d.key AND f.created_at = d.created_at;
    GET DIAGNOSTICS n = ROW_COUNT;
    updated := updated + n;
  END LOOP;
  RETURN updated;
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
  p_demo              boolean
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
                                       p_request_hashes[i], p_lease_ms, p_lock_timeout_ms, p_require_existing[i], p_demo);
    RETURN NEXT;
  END LOOP;
END;
$$;
-- onceboard_complete_tenant: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- One tenant's completions, for Citus (lib/idempotency/citus.ts): distributed by p_tenant and
-- co-located with effects, so it runs on the worker holding the tenant's shard. Each row is named
-- and guarded exactly as a single completion names it (complete-sql.ts) and a completed row keeps
-- its outcome, error and completed_at; it returns the claims still ours, by their whole ref. The
-- time is taken once into a variable: Citus refuses a volatile function (clock_timestamp()) in an
-- UPDATE on a distributed table, and any non-immutable one inside CASE. Rows are updated in key
-- order, so two calls sharing keys cannot deadlock.
CREATE OR REPLACE FUNCTION onceboard.onceboard_complete_tenant(
  p_tenant      text,
  p_keys        text[],
  p_created_at  timestamptz[],
  p_owners      text[],
  p_attempts    integer[],
  p_outcomes    jsonb[],
  p_errors      text[]
)
RETURNS TABLE (o_tenant_id text, o_key text, o_owner text, o_attempt integer)
LANGUAGE plpgsql
AS $$
DECLARE
  ts timestamptz := clock_timestamp();
  i  integer;
BEGIN
  FOR i IN SELECT o FROM generate_series(1, coalesce(cardinality(p_keys), 0)) AS o ORDER BY p_keys[o], o LOOP
    RETURN QUERY
    UPDATE onceboard.effects e
       SET outcome = CASE WHEN e.status = 'completed' THEN e.outcome ELSE p_outcomes[i] END,
           error = CASE WHEN e.status = 'completed' THEN e.error ELSE p_errors[i] END,
           completed_at = CASE WHEN e.status = 'completed' THEN e.completed_at ELSE ts END,
           status = 'completed', lease_until = NULL, updated_at = ts
     WHERE e.tenant_id = p_tenant AND e.key = p_keys[i] AND e.created_at = p_created_at[i]
       AND e.owner = p_owners[i] AND e.attempt = p_attempts[i] AND e.status IN ('in_progress', 'completed')
    RETURNING e.tenant_id, e.key, e.owner, e.attempt;
  END LOOP;
END;
$$;
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
