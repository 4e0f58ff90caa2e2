-- Indexes on effects (issue 14): every index on effects is written by every claim, so keep only
-- those a measured query needs. Costs measured in docs/benchmarks.md ("Issue 14").
--
-- 1. effects_job_type_created_at_idx (job_type, created_at) goes. No query reads through it: the
--    console's and the retention advisor's effects queries bound created_at, which prunes to the
--    window's daily partitions, and then aggregate the window's rows; none looks up a job type's
--    few rows. It cost one index insert per claim.
-- 2. effects_status_lease_until_idx (status, lease_until) becomes a partial index on lease_until
--    WHERE status = 'in_progress': stuck claims (in progress past their lease) are the only reader,
--    and that subset is tiny, while completed rows, the bulk of the table, were all indexed. A
--    completion no longer inserts an index entry (the completed row falls outside the predicate).
--    The stuck-claims query (status = 'in_progress' AND lease_until < $1 ORDER BY lease_until)
--    reads it in order.
--
-- On a large existing table CREATE INDEX holds a SHARE lock on each partition while it builds
-- (claims wait). The partial index is small, but run this migration in a quiet moment.

DROP INDEX IF EXISTS effects_job_type_created_at_idx;
DROP INDEX IF EXISTS effects_status_lease_until_idx;
CREATE INDEX effects_in_progress_lease_until_idx ON effects (lease_until) WHERE status = 'in_progress';
