-- A delivery_timeline column whose values are all equal in a chunk is stored once: one element,
-- which stands for every delivery of the chunk. effect_created_at may also be empty: each delivery
-- met the effect it created (effect_created_at = delivered_at, as every first delivery does).
-- keys always holds every delivery's. Readers take element 1 of a one-element column, else element
-- i (lib/console/get-effect.ts); lib/idempotency/timeline.ts decides, chunk by chunk.
--
-- Why: after the claim-path fixes of 0013, batched claims (claimMany, about 30,000 claims/s on 2
-- cores) measured the timeline at 0.864 of off in bench:timeline, over its 5 % bound (issue 24):
-- about 5 µs of machine time a delivery, half in the worker (building the arrays and their JSON),
-- half in the server (parsing them into arrays: two timestamps a delivery most of it). A batch's
-- deliveries share tenant, job type, answer, attempts, message id (none) and, within one
-- statement, their instant; a first delivery's effect_created_at is its delivered_at. Measured on
-- the bench's batch-shaped flush (5,000 first deliveries, batches of 50; 2 cores): the worker's
-- chunking and JSON.stringify 1.1–1.2 µs a delivery before, 0.4 after; the server parsing the JSON
-- into arrays 4.5–4.8 µs before, 2.0–2.3 after (122 bytes of JSON a delivery before, 57 after).
--
-- NOT VALID: every row written before satisfies the stricter check 0010 made, and validating would
-- read every chunk's arrays (stored out of line) while this migration holds the lock that stops
-- every worker's flush. New rows are checked.
ALTER TABLE onceboard.delivery_timeline
  DROP CONSTRAINT delivery_timeline_parallel_check,
  ADD CONSTRAINT delivery_timeline_parallel_check CHECK (
    cardinality(tenants) IN (1, cardinality(keys)) AND cardinality(job_types) IN (1, cardinality(keys))
    AND cardinality(delivered_at) IN (1, cardinality(keys)) AND cardinality(answers) IN (1, cardinality(keys))
    AND cardinality(message_ids) IN (1, cardinality(keys)) AND cardinality(delivery_attempts) IN (1, cardinality(keys))
    AND cardinality(effect_attempts) IN (1, cardinality(keys)) AND cardinality(claim_ms) IN (1, cardinality(keys))
    AND cardinality(effect_created_at) IN (0, 1, cardinality(keys))) NOT VALID;
