-- Onceboard's base schema. The effects table is range-partitioned by day on created_at with no
-- default partition: a row outside the premade range fails loudly, and DETACH PARTITION
-- CONCURRENTLY stays possible (it is refused while a default partition exists).

CREATE TABLE effects (
  tenant_id          text        NOT NULL,
  key                text        NOT NULL,
  job_type           text        NOT NULL,
  status             text        NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed', 'abandoned')),
  policy             text        NOT NULL CHECK (policy IN ('external', 'at_most_once', 'transactional', 'once')),
  attempt            integer     NOT NULL DEFAULT 1,
  owner              text,
  lease_until        timestamptz,
  first_message_id   text,
  last_message_id    text,
  request_hash       text,
  outcome            jsonb,
  error              text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  completed_at       timestamptz,
  duplicate_count    integer     NOT NULL DEFAULT 0,
  last_duplicate_at  timestamptz,
  max_gap_seconds    double precision,
  demo               boolean     NOT NULL DEFAULT false,
  CONSTRAINT effects_pkey PRIMARY KEY (tenant_id, key, created_at),
  CONSTRAINT effects_tenant_id_length CHECK (length(tenant_id) BETWEEN 1 AND 255),
  CONSTRAINT effects_key_length CHECK (length(key) BETWEEN 1 AND 255)
) PARTITION BY RANGE (created_at);

-- Stuck claims: in progress past their lease.
CREATE INDEX effects_status_lease_until_idx ON effects (status, lease_until);
CREATE INDEX effects_job_type_created_at_idx ON effects (job_type, created_at);

-- Creates the daily partitions covering [from_day, to_day], each with its own unique index on
-- (tenant_id, key) so same-partition duplicates are caught natively by ON CONFLICT.
-- Concurrent callers (two workers starting together) are serialised by a transaction-level
-- advisory lock: CREATE TABLE IF NOT EXISTS alone still races on the catalog.
CREATE FUNCTION onceboard_ensure_partitions(from_day date, to_day date)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  day date;
  name text;
  created integer := 0;
BEGIN
  IF to_day < from_day THEN
    RAISE EXCEPTION 'onceboard_ensure_partitions: to_day % is before from_day %', to_day, from_day;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('onceboard:partitions', 0));
  day := from_day;
  WHILE day <= to_day LOOP
    name := 'effects_p' || to_char(day, 'YYYYMMDD');
    IF to_regclass(name) IS NULL THEN
      created := created + 1;
    END IF;
    EXECUTE format(
      'CREATE TABLE IF NOT EXISTS %I PARTITION OF effects FOR VALUES FROM (%L) TO (%L)',
      name, (day::timestamp AT TIME ZONE 'UTC'), ((day + 1)::timestamp AT TIME ZONE 'UTC'));
    EXECUTE format('CREATE UNIQUE INDEX IF NOT EXISTS %I ON %I (tenant_id, key)', name || '_tenant_key_uq', name);
    day := day + 1;
  END LOOP;
  RETURN created;
END;
$$;

-- Upper bounds, in seconds, of the redelivery-gap buckets stored in worker_stats_minute.gap_buckets
-- (1 s … 30 d, then +Inf). Kept in one place so the worker, the console and Prometheus agree.
CREATE FUNCTION onceboard_gap_bucket_bounds()
RETURNS double precision[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[1, 5, 15, 60, 300, 900, 3600, 14400, 43200, 86400, 172800, 259200, 604800, 1209600, 2592000]::double precision[]
$$;

-- Element-wise sum of two count arrays of possibly different lengths (for rollup upserts).
CREATE FUNCTION onceboard_add_counts(a bigint[], b bigint[])
RETURNS bigint[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_agg(coalesce(a[i], 0) + coalesce(b[i], 0) ORDER BY i), '{}')
  FROM generate_series(1, greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0))) AS i
$$;

CREATE TABLE worker_stats_minute (
  minute               timestamptz      NOT NULL,
  job_type             text             NOT NULL,
  claims               bigint           NOT NULL DEFAULT 0,
  suppressed           bigint           NOT NULL DEFAULT 0,
  in_flight            bigint           NOT NULL DEFAULT 0,
  takeovers            bigint           NOT NULL DEFAULT 0,
  abandoned            bigint           NOT NULL DEFAULT 0,
  failed               bigint           NOT NULL DEFAULT 0,
  key_reuse            bigint           NOT NULL DEFAULT 0,
  uncaught_violations  bigint           NOT NULL DEFAULT 0,
  deliveries           bigint           NOT NULL DEFAULT 0,
  redeliveries         bigint           NOT NULL DEFAULT 0,
  message_id_keys      bigint           NOT NULL DEFAULT 0,
  claim_seconds_sum    double precision NOT NULL DEFAULT 0,
  gap_buckets          bigint[]         NOT NULL DEFAULT '{}',
  gap_seconds_sum      double precision NOT NULL DEFAULT 0,
  demo                 boolean          NOT NULL DEFAULT false,
  updated_at           timestamptz      NOT NULL DEFAULT now(),
  CONSTRAINT worker_stats_minute_pkey PRIMARY KEY (minute, job_type)
);
CREATE INDEX worker_stats_minute_job_type_minute_idx ON worker_stats_minute (job_type, minute);

CREATE TABLE uncaught_violations_minute (
  minute           timestamptz NOT NULL,
  job_type         text        NOT NULL,
  constraint_name  text        NOT NULL,
  count            bigint      NOT NULL DEFAULT 0,
  demo             boolean     NOT NULL DEFAULT false,
  CONSTRAINT uncaught_violations_minute_pkey PRIMARY KEY (minute, job_type, constraint_name)
);

CREATE TABLE api_tokens (
  id            uuid        NOT NULL DEFAULT gen_random_uuid(),
  name          text        NOT NULL,
  tenant_id     text,
  role          text        NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
  token_hash    text        NOT NULL,
  prefix        text        NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,
  revoked_at    timestamptz,
  last_used_at  timestamptz,
  CONSTRAINT api_tokens_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX api_tokens_token_hash_key ON api_tokens (token_hash);

CREATE TABLE audit_log (
  id         bigserial   NOT NULL,
  at         timestamptz NOT NULL DEFAULT now(),
  token_id   uuid,
  actor      text        NOT NULL,
  tenant_id  text,
  action     text        NOT NULL,
  target     text,
  detail     jsonb,
  ip         text,
  CONSTRAINT audit_log_pkey PRIMARY KEY (id)
);
CREATE INDEX audit_log_at_idx ON audit_log (at);
CREATE INDEX audit_log_tenant_id_at_idx ON audit_log (tenant_id, at);

CREATE TABLE retention_settings (
  id                     smallint    NOT NULL DEFAULT 1 CHECK (id = 1),
  retention_days         integer     NOT NULL DEFAULT 7 CHECK (retention_days >= 1),
  max_retry_window_days  integer     NOT NULL DEFAULT 3 CHECK (max_retry_window_days >= 0),
  premake_days           integer     NOT NULL DEFAULT 7 CHECK (premake_days BETWEEN 1 AND 90),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  updated_by             text,
  CONSTRAINT retention_settings_pkey PRIMARY KEY (id),
  -- Effects kept for less than the longest retry window would let a late replay run again.
  CONSTRAINT retention_covers_retry_window CHECK (retention_days >= max_retry_window_days)
);
INSERT INTO retention_settings (id) VALUES (1) ON CONFLICT (id) DO NOTHING;
