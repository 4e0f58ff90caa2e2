-- completions, failures and the duplicate ledger update each row on its own: joined to the set, they hashed a whole new partition per batch (as onceboard_claim_batch did, migration 0013)
--
-- Stamped by `npm run db:stamp` from lib/idempotency/sql/ (onceboard_apply_duplicates.sql, onceboard_complete_batch.sql, onceboard_fail_batch.sql):
-- edit those sources, never this migration. Objects are named onceboard.<name>: migrate() rewrites that.

-- onceboard_apply_duplicates: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The duplicate ledger's flush (lib/idempotency/duplicates.ts): adds each effect's duplicates seen
-- since the last flush to its row. One UPDATE per effect, in key order, for
-- onceboard_complete_batch's reasons (as a join it scanned the whole new partition per flush).
-- Returns how many rows it updated.
CREATE OR REPLACE FUNCTION onceboard.onceboard_apply_duplicates(p_duplicates jsonb)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  d record;
  updated integer := 0;
BEGIN
  FOR d IN
    SELECT * FROM jsonb_to_recordset(p_duplicates)
                    AS j(tenant_id text, key text, created_at timestamptz, n integer, last_at timestamptz,
                         max_gap double precision, last_message_id text)
     ORDER BY j.tenant_id, j.key
  LOOP
    UPDATE onceboard.effects f
       SET duplicate_count = f.duplicate_count + d.n,
           last_duplicate_at = greatest(f.last_duplicate_at, d.last_at),
           max_gap_seconds = greatest(coalesce(f.max_gap_seconds, 0), d.max_gap),
           last_message_id = coalesce(d.last_message_id, f.last_message_id)
     WHERE f.tenant_id = d.tenant_id AND f.key = d.key AND f.created_at = d.created_at;
    IF FOUND THEN
      updated := updated + 1;
    END IF;
  END LOOP;
  RETURN updated;
END;
$$;
-- onceboard_complete_batch: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Many completions in one round trip and one commit (effects.completeMany, coalesced completions):
-- each row named and guarded exactly as a single completion names it; returns the claims still
-- ours, by their whole ref (a batch may hold a taken-over claim and its new owner's, of one key).
-- One UPDATE per claim, not one joined to the set: as a join the planner hashed the partition
-- whenever the plan was cached while the day's partition looked empty, and scanned every row of it
-- per batch until autovacuum analyzed it (migration 0013 says more). Rows are locked in key order,
-- so two batches sharing keys cannot deadlock.
CREATE OR REPLACE FUNCTION onceboard.onceboard_complete_batch(
  p_tenants     text[],
  p_keys        text[],
  p_created_at  timestamptz[],
  p_owners      text[],
  p_attempts    integer[],
  p_outcomes    jsonb[],
  p_errors      text[]
)
RETURNS TABLE (o_tenant_id text, o_key text, o_owner text, o_attempt integer)
LANGUAGE plpgsql AS $$
DECLARE
  c record;
BEGIN
  FOR c IN
    SELECT * FROM unnest(p_tenants, p_keys, p_created_at, p_owners, p_attempts, p_outcomes, p_errors)
                    AS u(tenant_id, key, created_at, owner, attempt, outcome, error)
     ORDER BY u.tenant_id, u.key
  LOOP
    UPDATE onceboard.effects e
       SET outcome = CASE WHEN e.status = 'completed' THEN e.outcome ELSE c.outcome END,
           error = CASE WHEN e.status = 'completed' THEN e.error ELSE c.error END,
           completed_at = CASE WHEN e.status = 'completed' THEN e.completed_at ELSE clock_timestamp() END,
           status = 'completed', lease_until = NULL, updated_at = clock_timestamp()
     WHERE e.tenant_id = c.tenant_id AND e.key = c.key AND e.created_at = c.created_at
       AND e.owner = c.owner AND e.attempt = c.attempt AND e.status IN ('in_progress', 'completed')
    RETURNING e.tenant_id, e.key, e.owner, e.attempt INTO o_tenant_id, o_key, o_owner, o_attempt;
    IF FOUND THEN
      RETURN NEXT;
    END IF;
  END LOOP;
END;
$$;
-- onceboard_fail_batch: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Many failures in one round trip and one commit (coalesced claim.fail() calls): each row named and
-- guarded exactly as a single failure names it; returns the claims still ours, by their whole ref.
-- One UPDATE per claim, in key order, for onceboard_complete_batch's reasons.
CREATE OR REPLACE FUNCTION onceboard.onceboard_fail_batch(
  p_tenants     text[],
  p_keys        text[],
  p_created_at  timestamptz[],
  p_owners      text[],
  p_attempts    integer[],
  p_errors      text[]
)
RETURNS TABLE (o_tenant_id text, o_key text, o_owner text, o_attempt integer)
LANGUAGE plpgsql AS $$
DECLARE
  c record;
BEGIN
  FOR c IN
    SELECT * FROM unnest(p_tenants, p_keys, p_created_at, p_owners, p_attempts, p_errors)
                    AS u(tenant_id, key, created_at, owner, attempt, error)
     ORDER BY u.tenant_id, u.key
  LOOP
    UPDATE onceboard.effects e
       SET status = 'failed', error = c.error, lease_until = NULL, updated_at = clock_timestamp()
     WHERE e.tenant_id = c.tenant_id AND e.key = c.key AND e.created_at = c.created_at
       AND e.owner = c.owner AND e.attempt = c.attempt AND e.status IN ('in_progress', 'failed')
    RETURNING e.tenant_id, e.key, e.owner, e.attempt INTO o_tenant_id, o_key, o_owner, o_attempt;
    IF FOUND THEN
      RETURN NEXT;
    END IF;
  END LOOP;
END;
$$;
