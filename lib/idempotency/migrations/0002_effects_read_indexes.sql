-- Two indexes on effects for the console's reads at scale (issues 10 and 12), each paid for by a
-- write path: see docs/benchmarks.md for bench:claims before and after.
--
-- effects_max_gap_seconds_idx: the Delivery gaps page and the retention advice ask the effects of a
-- window which saw a duplicate later than the retry window, and which saw the longest gap. Without
-- it each is a pass over every row of the window (620,000 rows for 30 days at 20,000 a day); with it,
-- a range or one backward step per partition. Partial: a claim inserts max_gap_seconds NULL and
-- completing it leaves it NULL, so the claim path writes no entry; only the batched duplicate
-- bookkeeping (off the claim path) adds one per effect it touches.
--
-- effects_tenant_created_at_idx: the console's per-tenant questions in time order (issue 10,
-- bench:lookup). The Keys search (a tenant's effects newest first matching a key fragment, a status
-- or a job type, keyset-paginated on (created_at, key)) becomes an index-only scan that stops once
-- the page is full, instead of reading every row of the tenant in the range (~10,000 heap pages at
-- 10M rows and 1,000 tenants); a key's job steps (the tenant's effects first claimed by the same
-- message within 3 days) read ~60 index pages instead of ~2,300 heap pages. Only columns that never
-- change after the claim, plus status, which the completion UPDATE changes anyway (it is not HOT:
-- status is in the lease index's predicate); last_message_id is left out so the batched duplicate
-- bookkeeping stays HOT. Every claim writes one more index entry.
--
-- Both are created on the partitioned table, so every partition made later (PARTITION OF, or
-- ATTACH by the partition manager) gets its own. On a large existing table this blocks writes while
-- it builds: there, build each partition's index CONCURRENTLY first, then CREATE INDEX … ON ONLY and
-- ALTER INDEX … ATTACH PARTITION.
CREATE INDEX effects_max_gap_seconds_idx ON onceboard.effects (max_gap_seconds) WHERE max_gap_seconds IS NOT NULL;
CREATE INDEX effects_tenant_created_at_idx ON onceboard.effects (tenant_id, created_at, key)
  INCLUDE (first_message_id, status, job_type);
