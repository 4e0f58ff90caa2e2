-- Retention and partition manager (issue 11). One truth for retention: the settings row below,
-- the workers' declared retry windows (worker_registrations) and a history of maintenance runs.
-- The partition DDL itself (premake, DETACH … CONCURRENTLY, DROP) is run by the worker library
-- (lib/idempotency/maintenance.ts), which the console and any worker call.

-- The partition interval (hour | day | week) and how many intervals are premade ahead.
-- premake_days is kept for older readers; premake_count is what the manager reads.
ALTER TABLE retention_settings
  ADD COLUMN partition_interval text    NOT NULL DEFAULT 'day' CHECK (partition_interval IN ('hour', 'day', 'week')),
  ADD COLUMN premake_count      integer NOT NULL DEFAULT 7 CHECK (premake_count BETWEEN 1 AND 1000);

-- One row per worker process that declared a retry window. A row whose heartbeat is older than
-- its TTL is not live: it no longer holds partitions back.
CREATE TABLE worker_registrations (
  worker_id                 text             NOT NULL,
  max_retry_window_seconds  double precision NOT NULL CHECK (max_retry_window_seconds >= 0),
  host                      text,
  pid                       integer,
  started_at                timestamptz      NOT NULL DEFAULT now(),
  heartbeat_at              timestamptz      NOT NULL DEFAULT now(),
  ttl_seconds               integer          NOT NULL DEFAULT 120 CHECK (ttl_seconds > 0),
  CONSTRAINT worker_registrations_pkey PRIMARY KEY (worker_id)
);
CREATE INDEX worker_registrations_heartbeat_at_idx ON worker_registrations (heartbeat_at);

-- Each maintenance run: who ran it, when, what it did and how it ended. operations is a JSON
-- array of { kind, partition, result, detail }.
CREATE TABLE maintenance_runs (
  id           bigserial   NOT NULL,
  runner       text        NOT NULL,
  trigger      text        NOT NULL,
  started_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz,
  result       text        NOT NULL DEFAULT 'running' CHECK (result IN ('running', 'success', 'failed')),
  operations   jsonb       NOT NULL DEFAULT '[]',
  error        text,
  CONSTRAINT maintenance_runs_pkey PRIMARY KEY (id)
);
CREATE INDEX maintenance_runs_started_at_idx ON maintenance_runs (started_at);

-- Startup's premake (onceboard_ensure_partitions, daily) must not collide with partitions the
-- manager made at another interval: a day already overlapped by any partition is left alone
-- (the manager fills any gap). Same signature, same advisory lock as before.
CREATE OR REPLACE FUNCTION onceboard_ensure_partitions(from_day date, to_day date)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  day date;
  name text;
  lo timestamptz;
  hi timestamptz;
  created integer := 0;
BEGIN
  IF to_day < from_day THEN
    RAISE EXCEPTION 'onceboard_ensure_partitions: to_day % is before from_day %', to_day, from_day;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('onceboard:partitions', 0));
  day := from_day;
  WHILE day <= to_day LOOP
    name := 'effects_p' || to_char(day, 'YYYYMMDD');
    lo := day::timestamp AT TIME ZONE 'UTC';
    hi := (day + 1)::timestamp AT TIME ZONE 'UTC';
    IF to_regclass(name) IS NULL AND NOT EXISTS (
      SELECT 1
        FROM pg_inherits i
       WHERE i.inhparent = 'effects'::regclass
         AND tstzrange(lo, hi) && tstzrange(
               (regexp_match(pg_get_expr((SELECT relpartbound FROM pg_class WHERE oid = i.inhrelid), i.inhrelid),
                             'FROM \(''([^'']+)''\) TO'))[1]::timestamptz,
               (regexp_match(pg_get_expr((SELECT relpartbound FROM pg_class WHERE oid = i.inhrelid), i.inhrelid),
                             'TO \(''([^'']+)''\)'))[1]::timestamptz)
    ) THEN
      EXECUTE format('CREATE TABLE %I PARTITION OF effects FOR VALUES FROM (%L) TO (%L)', name, lo, hi);
      EXECUTE format('CREATE UNIQUE INDEX IF NOT EXISTS %I ON %I (tenant_id, key)', name || '_tenant_key_uq', name);
      created := created + 1;
    END IF;
    day := day + 1;
  END LOOP;
  RETURN created;
END;
$$;
