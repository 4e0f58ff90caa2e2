-- delivery_timeline's arrays are stored uncompressed (STORAGE EXTERNAL: out of line, never pglz)
--
-- Why: writing a chunk of 1,000 deliveries cost the server about 7.5 µs a delivery, and most of it
-- was pglz compressing the arrays (docs/benchmarks.md: 7.1–9.0 µs compressed, 3.0–4.9 µs not,
-- PostgreSQL 15, 2 cores). On the batched claim path (about 250 µs of machine time a claim at 8,000
-- claims/s on 2 cores) that was most of the timeline's 6–7 % cost, over the 5 % it may take. The
-- table is UNLOGGED and lives only as long as its effects partition, so the space is cheap; lz4 would
-- cost less than pglz, but not every server is built with it (the embedded PostgreSQL is not).
-- ALTER on the partitioned table reaches every partition, and partitions made later (PARTITION OF)
-- take their columns' storage from it.
ALTER TABLE onceboard.delivery_timeline
  ALTER COLUMN later_keys SET STORAGE EXTERNAL,
  ALTER COLUMN tenants SET STORAGE EXTERNAL,
  ALTER COLUMN keys SET STORAGE EXTERNAL,
  ALTER COLUMN job_types SET STORAGE EXTERNAL,
  ALTER COLUMN delivered_at SET STORAGE EXTERNAL,
  ALTER COLUMN answers SET STORAGE EXTERNAL,
  ALTER COLUMN message_ids SET STORAGE EXTERNAL,
  ALTER COLUMN delivery_attempts SET STORAGE EXTERNAL,
  ALTER COLUMN effect_attempts SET STORAGE EXTERNAL,
  ALTER COLUMN claim_ms SET STORAGE EXTERNAL,
  ALTER COLUMN effect_created_at SET STORAGE EXTERNAL;
