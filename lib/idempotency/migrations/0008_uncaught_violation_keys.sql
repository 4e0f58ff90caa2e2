-- Every uncaught unique violation, one row each, written by the worker the moment it happens
-- (lib/idempotency/violations.ts, recordUncaughtViolation). The per-minute rollup counts them for
-- the charts but kept only the minute's last key, in worker memory until the next flush: the
-- console pinned that one key on the whole group's count, and a worker killed before its flush lost
-- its violations. These rows are the list of every affected key, each tenant's own.
--
-- Not partitioned: violations are rare (a missing guard in a handler, an alarm), so the table
-- stays small, and maintain() deletes rows older than the effects it keeps (now − max(retention,
-- largest declared retry window)) through the occurred_at index. A partitioned table would need
-- its own premade partitions before a violation could be written at all, and a missing partition
-- would lose exactly the row that is the alarm.
--
-- The worker names each row (id): an insert retried after a lost reply writes it once.
CREATE TABLE onceboard.uncaught_violation_keys (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  occurred_at timestamp with time zone NOT NULL DEFAULT now(),
  tenant_id text NOT NULL,
  job_type text NOT NULL,
  constraint_name text NOT NULL,
  key text NOT NULL,
  message_id text,
  -- The driver's error message (redacted by the console before it is shown).
  message text,
  worker_id text,
  demo boolean NOT NULL DEFAULT false,
  CONSTRAINT uncaught_violation_keys_pkey PRIMARY KEY (id)
);

-- The console's list: newest first, keyset on (occurred_at, id), one tenant's or every tenant's.
CREATE INDEX uncaught_violation_keys_tenant_occurred_idx ON onceboard.uncaught_violation_keys USING btree (tenant_id, occurred_at, id);
CREATE INDEX uncaught_violation_keys_occurred_idx ON onceboard.uncaught_violation_keys USING btree (occurred_at, id);
-- A key's own violations (the Keys page's detail).
CREATE INDEX uncaught_violation_keys_tenant_key_idx ON onceboard.uncaught_violation_keys USING btree (tenant_id, key, occurred_at);
