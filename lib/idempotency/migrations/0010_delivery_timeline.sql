-- Every delivery of a key, one row each: when the database answered its claim, which message and
-- broker attempt it was, which worker asked, what the claim answered and how long the claim took
-- (the bounded wait for an in-flight copy included). The console's key page reads it as the key's
-- timeline; the effects row keeps only counters (duplicate_count, first and last message id).
--
-- Written by the worker in batches (lib/idempotency/timeline.ts), never by the claim itself: the
-- claim stays one round trip, and a duplicate's claim stays read-only. A worker killed between two
-- flushes loses its unflushed rows, never a claim.
--
-- Partitioned like effects, on delivered_at (the database clock, as effects.created_at), with the
-- same bounds: maintain() makes a timeline partition beside each effects partition and drops it
-- once the effects partition of its range is gone (maintenance-timeline.ts). No default partition,
-- as for effects.
--
-- Its partitions are UNLOGGED: they write no WAL. Measured with bench:claims, a logged timeline cost
-- fresh claims about a third of their rate on a loaded machine (each flush's WAL was flushed
-- ahead of the claims' own commits), an unlogged one nothing measurable. The price, documented in
-- docs/worker-library.md: a PostgreSQL crash (not a clean restart) empties the timeline, and
-- replicas and WAL-based backups do not have it. It is a diagnostic record; the effects table,
-- which decides every claim, stays logged.
--
-- The worker names each row (delivery_id): a flush retried after a lost reply writes it once. The
-- unique index also serves the key page's read (tenant, key, in time order).
CREATE TABLE onceboard.delivery_timeline (
  tenant_id text NOT NULL,
  key text NOT NULL,
  delivered_at timestamp with time zone NOT NULL,
  delivery_id uuid NOT NULL,
  answer text NOT NULL CONSTRAINT delivery_timeline_answer_check CHECK (answer = ANY (ARRAY[
    'claimed', 'duplicate', 'waited', 'in_flight', 'takeover', 'retry', 'abandoned', 'key_reuse', 'beyond_retention'])),
  job_type text NOT NULL,
  message_id text,
  -- The broker's delivery count, when the adapter passed one.
  delivery_attempt integer,
  -- The effect's attempt the claim saw or made (takeover and retry: + 1).
  effect_attempt integer NOT NULL,
  worker_id text NOT NULL,
  claim_ms double precision NOT NULL,
  -- The effects row this delivery met (its created_at), to tell one life of a key from a later one.
  effect_created_at timestamp with time zone,
  demo boolean NOT NULL DEFAULT false
) PARTITION BY RANGE (delivered_at);

CREATE UNIQUE INDEX delivery_timeline_key_uq ON onceboard.delivery_timeline
  USING btree (tenant_id, key, delivered_at, delivery_id);

-- A timeline partition for every effects partition there is, with its bounds.
DO $$
DECLARE
  p record;
BEGIN
  FOR p IN
    SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'onceboard.effects'::regclass AND NOT i.inhdetachpending
  LOOP
    EXECUTE format('CREATE UNLOGGED TABLE onceboard.%I PARTITION OF onceboard.delivery_timeline %s',
                   'delivery_timeline_' || substr(p.name, length('effects_') + 1), p.bound);
  END LOOP;
END;
$$;
