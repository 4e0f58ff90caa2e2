-- Every delivery of a key: when the database answered its claim, which message and broker attempt
-- it was, which worker asked, what the claim answered and how long the claim took (the bounded
-- wait for an in-flight copy included). The console's key page reads it as the key's timeline;
-- the effects row keeps only counters (duplicate_count, first and last message id).
--
-- Written by the worker in the background (lib/idempotency/timeline.ts), never by the claim: the
-- claim stays one round trip, and a duplicate's claim stays read-only. A worker killed between two
-- flushes loses its unflushed deliveries, never a claim.
--
-- One row per chunk of up to 1,000 deliveries of one worker's flush, not one per delivery: the
-- deliveries are parallel arrays (element i of every array is one delivery), so a flush writes a
-- handful of rows and index entries instead of one heap row and one index entry per delivery. A
-- row per delivery cost batched claims about a fifth of their rate and duplicates a third
-- (docs/benchmarks.md, "The delivery timeline"). Two kinds of chunk, told apart by later_keys:
--  - first deliveries (answer 'claimed', later_keys NULL), in time order, within one UTC minute:
--    a claimed delivery is the instant its effect was created (delivered_at = effects.created_at),
--    so the key page finds it through (first_at, chunk_id) by that instant, without an index entry
--    per key. That keeps fresh and batched claims, every one a new key, free of per-key index work.
--  - every other answer (duplicates, waits, takeovers, retries, key reuse, …), ordered by key
--    within one UTC hour, with later_keys the distinct tenant U+001F key of the chunk: one GIN
--    entry per key per chunk however many copies of it the flush saw.
-- A chunk never spans a UTC hour, so it lies inside one partition of every interval (hour, day,
-- week).
--
-- Partitioned like effects, on first_at, with the same bounds: maintain() makes a timeline
-- partition beside each effects partition and drops it once the effects partition of its range
-- is gone (maintenance-timeline.ts); the startup premake makes them too (0011). No default
-- partition, as for effects.
--
-- Its partitions are UNLOGGED: they write no WAL. A logged timeline cost fresh claims about a third
-- of their rate on a loaded machine (each flush's WAL was flushed ahead of the claims' own commits).
-- The price, documented in docs/worker-library.md: a PostgreSQL crash (not a clean restart) empties
-- the timeline, and replicas and WAL-based backups do not have it. It is a diagnostic record; the
-- effects table, which decides every claim, stays logged.
--
-- The worker names each chunk (chunk_id): a flush retried after a lost reply writes it once.
CREATE TABLE onceboard.delivery_timeline (
  -- The earliest and latest delivered_at in the chunk (the partition key and the first-delivery lookup).
  first_at timestamp with time zone NOT NULL,
  last_at timestamp with time zone NOT NULL,
  chunk_id uuid NOT NULL,
  worker_id text NOT NULL,
  demo boolean NOT NULL DEFAULT false,
  -- NULL: a chunk of first deliveries. Else the chunk's distinct tenant_id || U+001F || key.
  later_keys text[],
  tenants text[] NOT NULL,
  keys text[] NOT NULL,
  job_types text[] NOT NULL,
  -- When the database answered each claim (the database clock, as effects.created_at).
  delivered_at timestamp with time zone[] NOT NULL,
  answers text[] NOT NULL CONSTRAINT delivery_timeline_answer_check CHECK (answers <@ ARRAY[
    'claimed', 'duplicate', 'waited', 'in_flight', 'takeover', 'retry', 'abandoned', 'key_reuse', 'beyond_retention']),
  message_ids text[] NOT NULL,
  -- The broker's delivery count, when the adapter passed one.
  delivery_attempts integer[] NOT NULL,
  -- The effect's attempt the claim saw or made (takeover and retry: + 1).
  effect_attempts integer[] NOT NULL,
  claim_ms real[] NOT NULL,
  -- The effects row each delivery met (its created_at), to tell one life of a key from a later one.
  effect_created_at timestamp with time zone[] NOT NULL,
  CONSTRAINT delivery_timeline_parallel_check CHECK (
    cardinality(keys) = cardinality(tenants) AND cardinality(keys) = cardinality(job_types)
    AND cardinality(keys) = cardinality(delivered_at) AND cardinality(keys) = cardinality(answers)
    AND cardinality(keys) = cardinality(message_ids) AND cardinality(keys) = cardinality(delivery_attempts)
    AND cardinality(keys) = cardinality(effect_attempts) AND cardinality(keys) = cardinality(claim_ms)
    AND cardinality(keys) = cardinality(effect_created_at))
) PARTITION BY RANGE (first_at);

-- The chunk's name (a retried flush) and the first-delivery lookup by instant.
CREATE UNIQUE INDEX delivery_timeline_first_at_uq ON onceboard.delivery_timeline USING btree (first_at, chunk_id);
-- A key's later deliveries.
CREATE INDEX delivery_timeline_later_keys_idx ON onceboard.delivery_timeline USING gin (later_keys)
  WHERE later_keys IS NOT NULL;

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
