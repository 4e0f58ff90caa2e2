-- The console's per-tenant questions, in time order, from one index (issue 10, bench:lookup):
--  - the Keys search: a tenant's effects newest first matching a key fragment, a status or a job
--    type, keyset-paginated on (created_at, key). Without it the search read every row of the
--    tenant in the range from the table (~10,000 heap pages at 10M rows, 1,000 tenants: 300-900 ms);
--    with it the page is found by an index-only scan that stops once the page is full;
--  - a key's job steps: effects of the tenant first claimed by the same message within 3 days.
--    Without it ~2,300 heap pages per lookup at 10M rows (20-180 ms), now ~60 index pages.
-- Columns that never change after the claim (tenant_id, created_at, key, first_message_id,
-- job_type) and status, which the completion UPDATE changes anyway: that UPDATE is already not HOT
-- (status is in the predicate of the lease index), so this index adds no index write to it beyond
-- its own entry. last_message_id is left out on purpose: the batched duplicate bookkeeping updates
-- it, and would stop being HOT. Every claim writes one more index entry: bench:claims before/after
-- in docs/benchmarks.md.
-- Created on the partitioned table, so every partition, and every one created later, gets it.
-- On a large existing table this blocks claims while it builds; there, build it per partition
-- first (CREATE INDEX CONCURRENTLY on each partition, then CREATE INDEX … ON ONLY and ALTER INDEX
-- … ATTACH PARTITION), outside a transaction.
CREATE INDEX effects_tenant_created_at_idx ON onceboard.effects (tenant_id, created_at, key)
  INCLUDE (first_message_id, status, job_type);
