-- The worker library's schema, whole: what `migrate()` (lib/idempotency/migrate.ts) installs into
-- an empty database. Objects are named `onceboard.<name>`; migrate() rewrites that qualifier for
-- another schema (schema.ts). Each function's one source is lib/idempotency/sql/<name>.sql: this
-- file was stamped from them, and later changes to a function are new files stamped by
-- `npm run db:stamp -- <name>`. Never edit this file once released; add 0002_… instead.
--
-- Equivalent to the console's pre-schema migration chain (prisma/legacy-migrations) up to
-- 20261201060100_claim_batch; lib/db/upgrade-legacy.ts moves a database made by that chain here,
-- and lib/db/schema-dump.test.ts checks both roads end in the same schema.

CREATE SCHEMA IF NOT EXISTS onceboard;

-- Functions refer to one another; pg_dump does the same to create them in any order.
SET LOCAL check_function_bodies = off;

CREATE TYPE onceboard.onceboard_claim_result AS (
  result text,
  status text,
  attempt integer,
  owner text,
  policy text,
  created_at timestamp with time zone,
  lease_until timestamp with time zone,
  outcome jsonb,
  error text,
  gap_seconds double precision,
  duplicate_count integer,
  first_message_id text,
  db_now timestamp with time zone
);

CREATE SEQUENCE onceboard.maintenance_runs_id_seq;

CREATE TABLE onceboard.claim_latency_hour (
  hour timestamp with time zone NOT NULL,
  job_type text NOT NULL,
  buckets bigint[] NOT NULL DEFAULT '{}'::bigint[],
  CONSTRAINT claim_latency_hour_pkey PRIMARY KEY (hour, job_type)
);

CREATE TABLE onceboard.claim_latency_minute (
  minute timestamp with time zone NOT NULL,
  job_type text NOT NULL,
  buckets bigint[] NOT NULL DEFAULT '{}'::bigint[],
  CONSTRAINT claim_latency_minute_pkey PRIMARY KEY (minute, job_type)
);

CREATE TABLE onceboard.effects (
  tenant_id text NOT NULL,
  key text NOT NULL,
  job_type text NOT NULL,
  status text NOT NULL,
  policy text NOT NULL,
  attempt integer NOT NULL DEFAULT 1,
  owner text,
  lease_until timestamp with time zone,
  first_message_id text,
  last_message_id text,
  request_hash text,
  outcome jsonb,
  error text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  completed_at timestamp with time zone,
  duplicate_count integer NOT NULL DEFAULT 0,
  last_duplicate_at timestamp with time zone,
  max_gap_seconds double precision,
  demo boolean NOT NULL DEFAULT false,
  CONSTRAINT effects_key_length CHECK (((length(key) >= 1) AND (length(key) <= 255))),
  CONSTRAINT effects_policy_check CHECK ((policy = ANY (ARRAY['external'::text, 'at_most_once'::text, 'transactional'::text, 'once'::text]))),
  CONSTRAINT effects_status_check CHECK ((status = ANY (ARRAY['in_progress'::text, 'completed'::text, 'failed'::text, 'abandoned'::text]))),
  CONSTRAINT effects_tenant_id_length CHECK (((length(tenant_id) >= 1) AND (length(tenant_id) <= 255)))
) PARTITION BY RANGE (created_at);

CREATE TABLE onceboard.maintenance_runs (
  id bigint NOT NULL DEFAULT nextval('onceboard.maintenance_runs_id_seq'::regclass),
  runner text NOT NULL,
  trigger text NOT NULL,
  started_at timestamp with time zone NOT NULL DEFAULT now(),
  finished_at timestamp with time zone,
  result text NOT NULL DEFAULT 'running'::text,
  operations jsonb NOT NULL DEFAULT '[]'::jsonb,
  error text,
  CONSTRAINT maintenance_runs_pkey PRIMARY KEY (id),
  CONSTRAINT maintenance_runs_result_check CHECK ((result = ANY (ARRAY['running'::text, 'success'::text, 'failed'::text])))
);

CREATE TABLE onceboard.retention_settings (
  id smallint NOT NULL DEFAULT 1,
  retention_days integer NOT NULL DEFAULT 7,
  max_retry_window_days integer NOT NULL DEFAULT 3,
  premake_days integer NOT NULL DEFAULT 7,
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_by text,
  partition_interval text NOT NULL DEFAULT 'day'::text,
  premake_count integer NOT NULL DEFAULT 7,
  CONSTRAINT retention_covers_retry_window CHECK ((retention_days >= max_retry_window_days)),
  CONSTRAINT retention_settings_id_check CHECK ((id = 1)),
  CONSTRAINT retention_settings_max_retry_window_days_check CHECK ((max_retry_window_days >= 0)),
  CONSTRAINT retention_settings_partition_interval_check CHECK ((partition_interval = ANY (ARRAY['hour'::text, 'day'::text, 'week'::text]))),
  CONSTRAINT retention_settings_pkey PRIMARY KEY (id),
  CONSTRAINT retention_settings_premake_count_check CHECK (((premake_count >= 1) AND (premake_count <= 1000))),
  CONSTRAINT retention_settings_premake_days_check CHECK (((premake_days >= 1) AND (premake_days <= 90))),
  CONSTRAINT retention_settings_retention_days_check CHECK ((retention_days >= 1))
);

CREATE TABLE onceboard.tenant_suppressions_hour (
  hour timestamp with time zone NOT NULL,
  tenant_id text NOT NULL,
  job_type text NOT NULL,
  count bigint NOT NULL DEFAULT 0,
  CONSTRAINT tenant_suppressions_hour_pkey PRIMARY KEY (hour, tenant_id, job_type)
);

CREATE TABLE onceboard.tenant_violations_hour (
  hour timestamp with time zone NOT NULL,
  tenant_id text NOT NULL,
  job_type text NOT NULL,
  constraint_name text NOT NULL,
  count bigint NOT NULL DEFAULT 0,
  last_key text NOT NULL,
  last_seen timestamp with time zone NOT NULL,
  CONSTRAINT tenant_violations_hour_pkey PRIMARY KEY (hour, tenant_id, job_type, constraint_name)
);

CREATE TABLE onceboard.uncaught_violations_minute (
  minute timestamp with time zone NOT NULL,
  job_type text NOT NULL,
  constraint_name text NOT NULL,
  count bigint NOT NULL DEFAULT 0,
  demo boolean NOT NULL DEFAULT false,
  last_tenant_id text,
  last_key text,
  last_message_id text,
  CONSTRAINT uncaught_violations_minute_pkey PRIMARY KEY (minute, job_type, constraint_name)
);

CREATE TABLE onceboard.worker_gaps_day (
  day timestamp with time zone NOT NULL,
  job_type text NOT NULL,
  gap_buckets bigint[] NOT NULL DEFAULT '{}'::bigint[],
  gap_seconds_sum double precision NOT NULL DEFAULT 0,
  claims_beyond_retention bigint NOT NULL DEFAULT 0,
  CONSTRAINT worker_gaps_day_pkey PRIMARY KEY (day, job_type)
);

CREATE TABLE onceboard.worker_gaps_hour (
  hour timestamp with time zone NOT NULL,
  job_type text NOT NULL,
  gap_buckets bigint[] NOT NULL DEFAULT '{}'::bigint[],
  gap_seconds_sum double precision NOT NULL DEFAULT 0,
  claims_beyond_retention bigint NOT NULL DEFAULT 0,
  CONSTRAINT worker_gaps_hour_pkey PRIMARY KEY (hour, job_type)
);

CREATE TABLE onceboard.worker_registrations (
  worker_id text NOT NULL,
  max_retry_window_seconds double precision NOT NULL,
  host text,
  pid integer,
  started_at timestamp with time zone NOT NULL DEFAULT now(),
  heartbeat_at timestamp with time zone NOT NULL DEFAULT now(),
  ttl_seconds integer NOT NULL DEFAULT 120,
  CONSTRAINT worker_registrations_max_retry_window_seconds_check CHECK ((max_retry_window_seconds >= (0)::double precision)),
  CONSTRAINT worker_registrations_pkey PRIMARY KEY (worker_id),
  CONSTRAINT worker_registrations_ttl_seconds_check CHECK ((ttl_seconds > 0))
);

CREATE TABLE onceboard.worker_stats_hour (
  hour timestamp with time zone NOT NULL,
  job_type text NOT NULL,
  claims bigint NOT NULL DEFAULT 0,
  suppressed bigint NOT NULL DEFAULT 0,
  in_flight bigint NOT NULL DEFAULT 0,
  takeovers bigint NOT NULL DEFAULT 0,
  abandoned bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0,
  key_reuse bigint NOT NULL DEFAULT 0,
  uncaught_violations bigint NOT NULL DEFAULT 0,
  deliveries bigint NOT NULL DEFAULT 0,
  redeliveries bigint NOT NULL DEFAULT 0,
  claim_seconds_sum double precision NOT NULL DEFAULT 0,
  CONSTRAINT worker_stats_hour_pkey PRIMARY KEY (hour, job_type)
);

CREATE TABLE onceboard.worker_stats_minute (
  minute timestamp with time zone NOT NULL,
  job_type text NOT NULL,
  claims bigint NOT NULL DEFAULT 0,
  suppressed bigint NOT NULL DEFAULT 0,
  in_flight bigint NOT NULL DEFAULT 0,
  takeovers bigint NOT NULL DEFAULT 0,
  abandoned bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0,
  key_reuse bigint NOT NULL DEFAULT 0,
  uncaught_violations bigint NOT NULL DEFAULT 0,
  deliveries bigint NOT NULL DEFAULT 0,
  redeliveries bigint NOT NULL DEFAULT 0,
  message_id_keys bigint NOT NULL DEFAULT 0,
  claim_seconds_sum double precision NOT NULL DEFAULT 0,
  gap_buckets bigint[] NOT NULL DEFAULT '{}'::bigint[],
  gap_seconds_sum double precision NOT NULL DEFAULT 0,
  demo boolean NOT NULL DEFAULT false,
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  claims_beyond_retention bigint NOT NULL DEFAULT 0,
  CONSTRAINT worker_stats_minute_pkey PRIMARY KEY (minute, job_type)
);

ALTER SEQUENCE onceboard.maintenance_runs_id_seq OWNED BY onceboard.maintenance_runs.id;

CREATE INDEX effects_in_progress_lease_until_idx ON onceboard.effects USING btree (lease_until) WHERE (status = 'in_progress'::text);
CREATE INDEX maintenance_runs_started_at_idx ON onceboard.maintenance_runs USING btree (started_at);
CREATE INDEX tenant_suppressions_hour_tenant_idx ON onceboard.tenant_suppressions_hour USING btree (tenant_id, hour);
CREATE INDEX tenant_violations_hour_tenant_idx ON onceboard.tenant_violations_hour USING btree (tenant_id, hour);
CREATE INDEX worker_registrations_heartbeat_at_idx ON onceboard.worker_registrations USING btree (heartbeat_at);
CREATE INDEX worker_stats_minute_job_type_minute_idx ON onceboard.worker_stats_minute USING btree (job_type, minute);
CREATE INDEX worker_stats_minute_late_gap_idx ON onceboard.worker_stats_minute USING btree (minute) WHERE (gap_seconds_sum >= (172800)::double precision);

INSERT INTO onceboard.retention_settings (id) VALUES (1) ON CONFLICT (id) DO NOTHING;

-- Element-wise sum of two count arrays of possibly different lengths (for rollup upserts).
CREATE OR REPLACE FUNCTION onceboard.onceboard_add_counts(a bigint[], b bigint[])
RETURNS bigint[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_agg(coalesce(a[i], 0) + coalesce(b[i], 0) ORDER BY i), '{}')
  FROM generate_series(1, greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0))) AS i
$$;

-- One claim, one round trip: refuse a stale snapshot (OB001), serialise claimers of one
-- (tenant, key) on a transaction-level advisory lock, look across the live partitions, then insert,
-- take over an expired lease or a failed attempt, mark an at-most-once claim abandoned, or answer
-- duplicate / in flight / key reuse / retention expired. Without waiting on the lock, a completed
-- or abandoned row (immutable) is answered at once. The advisory-lock key
-- hashtextextended(tenant || chr(1) || key, 0) must never change: claims from libraries built
-- against earlier migrations must stay serialised with these.
CREATE OR REPLACE FUNCTION onceboard.onceboard_claim(
  p_tenant            text,
  p_key               text,
  p_job_type          text,
  p_policy            text,
  p_owner             text,
  p_message_id        text,
  p_request_hash      text,
  p_lease_ms          integer,
  p_lock_timeout_ms   integer,
  p_require_existing  boolean,
  p_demo              boolean
)
RETURNS onceboard.onceboard_claim_result
LANGUAGE plpgsql AS $$
DECLARE
  r        onceboard.onceboard_claim_result;
  e        record;
  saved    text;
  ts       timestamptz;
  lease    timestamptz;
  gap      double precision;
  n        integer;
  lock_key bigint;
BEGIN
  -- Under REPEATABLE READ / SERIALIZABLE the look below would use a stale snapshot and could miss
  -- a claim committed in another partition: refuse (the library maps OB001 to IsolationLevelError).
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'onceboard_claim cannot run inside a % transaction: its look into older partitions would use a stale snapshot',
      current_setting('transaction_isolation')
      USING ERRCODE = 'OB001', DETAIL = current_setting('transaction_isolation'),
            HINT = 'claim in a READ COMMITTED transaction (the default)';
  END IF;

  lock_key := hashtextextended(p_tenant || chr(1) || p_key, 0);
  IF NOT pg_try_advisory_xact_lock(lock_key) THEN
    -- Someone holds the lock. A completed or abandoned row never changes: answer without waiting.
    ts := date_trunc('milliseconds', clock_timestamp());
    SELECT f.status, f.attempt, f.owner, f.policy, f.created_at, f.lease_until, f.outcome, f.error,
           f.request_hash, f.duplicate_count, f.first_message_id
      INTO e
      FROM onceboard.effects f
     WHERE f.tenant_id = p_tenant AND f.key = p_key AND f.created_at <= ts + interval '1 day'
       AND f.status IN ('completed', 'abandoned');
    IF FOUND THEN
      r := ROW(NULL, e.status, e.attempt, e.owner, e.policy, e.created_at, e.lease_until, e.outcome, e.error,
               extract(epoch FROM ts - e.created_at), e.duplicate_count, e.first_message_id, ts);
      r.result := CASE WHEN p_request_hash IS NOT NULL AND e.request_hash IS NOT NULL AND e.request_hash <> p_request_hash
                       THEN 'key_reuse' ELSE 'duplicate' END;
      RETURN r;
    END IF;
    saved := current_setting('lock_timeout');
    PERFORM set_config('lock_timeout', greatest(p_lock_timeout_ms, 1)::text || 'ms', true);
    PERFORM pg_advisory_xact_lock(lock_key);
    PERFORM set_config('lock_timeout', saved, true);
  END IF;

  -- At most a few iterations: we loop only when a completion (which does not take the advisory
  -- lock) changed the row between our read and our conditional update.
  LOOP
    ts := date_trunc('milliseconds', clock_timestamp());
    lease := ts + p_lease_ms * interval '1 millisecond';

    -- At most one row per (tenant, key) across partitions (the advisory lock). Bounded above so
    -- the premade future partitions are pruned at executor start; one day ahead so a row dated
    -- before the database clock stepped back (up to 24 h) is still seen.
    SELECT f.status, f.attempt, f.owner, f.policy, f.created_at, f.lease_until, f.outcome, f.error,
           f.request_hash, f.duplicate_count, f.first_message_id
      INTO e
      FROM onceboard.effects f
     WHERE f.tenant_id = p_tenant AND f.key = p_key AND f.created_at <= ts + interval '1 day';

    IF NOT FOUND THEN
      -- The delivery is older than the retention: its record may have been pruned, so "not found"
      -- does not prove it never ran. Refuse rather than run it again.
      IF p_require_existing THEN
        r := ROW('retention_expired', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ts);
        RETURN r;
      END IF;
      -- created_at is truncated to milliseconds so a JavaScript Date names the row exactly.
      INSERT INTO onceboard.effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until,
                           first_message_id, last_message_id, request_hash, created_at, updated_at, demo)
      VALUES (p_tenant, p_key, p_job_type, 'in_progress', p_policy, 1, p_owner, lease,
              p_message_id, p_message_id, p_request_hash, ts, ts, p_demo);
      r := ROW('claimed', 'in_progress', 1, p_owner, p_policy, ts, lease, NULL, NULL, NULL, 0, p_message_id, ts);
      RETURN r;
    END IF;

    gap := extract(epoch FROM ts - e.created_at);
    r := ROW(NULL, e.status, e.attempt, e.owner, e.policy, e.created_at, e.lease_until, e.outcome, e.error, gap,
             e.duplicate_count, e.first_message_id, ts);

    IF p_request_hash IS NOT NULL AND e.request_hash IS NOT NULL AND e.request_hash <> p_request_hash THEN
      r.result := 'key_reuse';
      RETURN r;
    END IF;

    -- Read-only on purpose: the library batches the duplicate bookkeeping
    -- (lib/idempotency/duplicates.ts), so a duplicate's claim commits without a WAL flush.
    IF e.status IN ('completed', 'abandoned') THEN
      r.result := 'duplicate';
      RETURN r;
    END IF;

    IF e.status = 'in_progress' AND e.owner = p_owner THEN
      -- Our own claim, seen again because the library retried a claim whose reply was lost.
      r.result := 'claimed';
      RETURN r;
    END IF;

    IF e.status = 'in_progress' AND e.lease_until > ts THEN
      r.result := 'in_flight';
      RETURN r;
    END IF;

    IF e.status = 'in_progress' AND e.policy = 'at_most_once' THEN
      -- A worker died between claim and completion of an at-most-once step: it may or may not
      -- have sent. By design we never send again; the claim is marked abandoned.
      UPDATE onceboard.effects f
         SET status = 'abandoned', attempt = f.attempt + 1, owner = p_owner, lease_until = NULL,
             completed_at = ts, updated_at = ts, last_message_id = coalesce(p_message_id, f.last_message_id),
             error = 'abandoned: lease of attempt ' || f.attempt || ' (' || coalesce(f.owner, '?') || ') expired'
       WHERE f.tenant_id = p_tenant AND f.key = p_key AND f.created_at = e.created_at
         AND f.status = 'in_progress' AND f.attempt = e.attempt
      RETURNING f.attempt, f.error INTO r.attempt, r.error;
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n = 1 THEN
        r.result := 'abandoned'; r.status := 'abandoned'; r.owner := p_owner; r.lease_until := NULL;
        RETURN r;
      END IF;
      CONTINUE;
    END IF;

    -- An expired lease (the owner crashed) or a failed attempt: exactly one claimer, the one
    -- holding the advisory lock, takes it over with attempt + 1. The attempt/status guard makes a
    -- completion that landed after our read win.
    UPDATE onceboard.effects f
       SET status = 'in_progress', attempt = f.attempt + 1, owner = p_owner,
           lease_until = lease, updated_at = ts, error = NULL,
           last_message_id = coalesce(p_message_id, f.last_message_id)
     WHERE f.tenant_id = p_tenant AND f.key = p_key AND f.created_at = e.created_at
       AND f.status = e.status AND f.attempt = e.attempt
    RETURNING f.attempt, f.lease_until INTO r.attempt, r.lease_until;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 1 THEN
      r.result := CASE WHEN e.status = 'failed' THEN 'retry' ELSE 'takeover' END;
      r.status := 'in_progress'; r.owner := p_owner; r.error := NULL;
      RETURN r;
    END IF;
  END LOOP;
END;
$$;

-- Many claims in one round trip and one commit: onceboard_claim for each (tenant, key), with the
-- same decisions and the same answers per key as single claims (claimed, duplicate, in flight,
-- key reuse, … are results, not errors, so one key's answer never fails another's). Each key has
-- its own owner, so a key twice in one batch is claimed once and reported in flight the second
-- time. Keys are claimed in the order of their advisory-lock keys, so two batches that share keys
-- take those locks in the same order and cannot deadlock. The locks are held until the batch
-- commits. A lock wait past p_lock_timeout_ms raises (55P03) for the whole batch: the library
-- then claims those keys one by one.
CREATE OR REPLACE FUNCTION onceboard.onceboard_claim_batch(
  p_tenants           text[],
  p_keys              text[],
  p_job_type          text,
  p_policy            text,
  p_owners            text[],
  p_message_ids       text[],
  p_request_hashes    text[],
  p_lease_ms          integer,
  p_lock_timeout_ms   integer,
  p_require_existing  boolean[],
  p_demo              boolean
)
RETURNS TABLE (ord integer, claim onceboard.onceboard_claim_result)
LANGUAGE plpgsql AS $$
DECLARE
  i integer;
BEGIN
  IF cardinality(p_keys) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_owners) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_message_ids) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_request_hashes) IS DISTINCT FROM cardinality(p_tenants)
     OR cardinality(p_require_existing) IS DISTINCT FROM cardinality(p_tenants) THEN
    RAISE EXCEPTION 'onceboard_claim_batch: the argument arrays differ in length';
  END IF;
  FOR i IN
    SELECT u.o::integer FROM unnest(p_tenants, p_keys) WITH ORDINALITY AS u(t, k, o)
     ORDER BY hashtextextended(u.t || chr(1) || u.k, 0), u.o
  LOOP
    ord := i;
    claim := onceboard.onceboard_claim(p_tenants[i], p_keys[i], p_job_type, p_policy, p_owners[i], p_message_ids[i],
                             p_request_hashes[i], p_lease_ms, p_lock_timeout_ms, p_require_existing[i], p_demo);
    RETURN NEXT;
  END LOOP;
END;
$$;

-- Upper bounds, in seconds, of the claim-duration buckets stored in claim_latency_minute.buckets
-- (then +Inf): the same list as idem_claim_duration_seconds in lib/idempotency/metrics.ts.
CREATE OR REPLACE FUNCTION onceboard.onceboard_claim_bucket_bounds()
RETURNS double precision[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]::double precision[]
$$;

-- Startup's premake (onceboard_ensure_partitions, daily) must not collide with partitions the
-- manager made at another interval: a day already overlapped by any partition is left alone
-- (the manager fills any gap). Same signature, same advisory lock as before.
CREATE OR REPLACE FUNCTION onceboard.onceboard_ensure_partitions(from_day date, to_day date)
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
    IF to_regclass('onceboard.' || quote_ident(name)) IS NULL AND NOT EXISTS (
      SELECT 1
        FROM pg_inherits i
       WHERE i.inhparent = 'onceboard.effects'::regclass
         AND tstzrange(lo, hi) && tstzrange(
               (regexp_match(pg_get_expr((SELECT relpartbound FROM pg_class WHERE oid = i.inhrelid), i.inhrelid),
                             'FROM \(''([^'']+)''\) TO'))[1]::timestamptz,
               (regexp_match(pg_get_expr((SELECT relpartbound FROM pg_class WHERE oid = i.inhrelid), i.inhrelid),
                             'TO \(''([^'']+)''\)'))[1]::timestamptz)
    ) THEN
      EXECUTE format('CREATE TABLE onceboard.%I PARTITION OF onceboard.effects FOR VALUES FROM (%L) TO (%L)', name, lo, hi);
      EXECUTE format('CREATE UNIQUE INDEX IF NOT EXISTS %I ON onceboard.%I (tenant_id, key)', name || '_tenant_key_uq', name);
      created := created + 1;
    END IF;
    day := day + 1;
  END LOOP;
  RETURN created;
END;
$$;

-- Upper bounds, in seconds, of the redelivery-gap buckets stored in worker_stats_minute.gap_buckets
-- (1 s … 30 d, then +Inf). Kept in one place so the worker, the console and Prometheus agree.
CREATE OR REPLACE FUNCTION onceboard.onceboard_gap_bucket_bounds()
RETURNS double precision[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[1, 5, 15, 60, 300, 900, 3600, 14400, 43200, 86400, 172800, 259200, 604800, 1209600, 2592000]::double precision[]
$$;

-- Both tables from one delta query.
CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_apply(deltas text)
RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[onceboard.onceboard_gaps_upsert(deltas, 'hour', 'worker_gaps_hour'), onceboard.onceboard_gaps_upsert(deltas, 'day', 'worker_gaps_day')]
$$;

CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_hour_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stmt text;
BEGIN
  FOREACH stmt IN ARRAY onceboard.onceboard_gaps_apply(
    'SELECT minute, job_type, onceboard.onceboard_sub_counts(''{}'', gap_buckets) AS gap_buckets,
            -gap_seconds_sum AS gap_seconds_sum, -claims_beyond_retention AS claims_beyond_retention
       FROM old_rows') LOOP
    EXECUTE stmt;
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_hour_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stmt text;
BEGIN
  FOREACH stmt IN ARRAY onceboard.onceboard_gaps_apply(
    'SELECT minute, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention FROM new_rows
      WHERE cardinality(gap_buckets) > 0 OR gap_seconds_sum <> 0 OR claims_beyond_retention <> 0') LOOP
    EXECUTE stmt;
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_hour_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stmt text;
BEGIN
  -- Old and new rows are matched by the primary key (minute, job_type), which upserts never change.
  FOREACH stmt IN ARRAY onceboard.onceboard_gaps_apply(
    'SELECT n.minute, n.job_type, onceboard.onceboard_sub_counts(n.gap_buckets, o.gap_buckets) AS gap_buckets,
            n.gap_seconds_sum - o.gap_seconds_sum AS gap_seconds_sum,
            n.claims_beyond_retention - o.claims_beyond_retention AS claims_beyond_retention
       FROM new_rows n JOIN old_rows o USING (minute, job_type)
      WHERE n.gap_buckets <> o.gap_buckets OR n.gap_seconds_sum <> o.gap_seconds_sum
         OR n.claims_beyond_retention <> o.claims_beyond_retention') LOOP
    EXECUTE stmt;
  END LOOP;
  RETURN NULL;
END;
$$;

-- The statement that adds a set of per-minute deltas (a query yielding minute, job_type,
-- gap_buckets, gap_seconds_sum, claims_beyond_retention) to worker_gaps_hour and worker_gaps_day.
-- Built as text and EXECUTEd inside each trigger function, where the transition tables are visible.
CREATE OR REPLACE FUNCTION onceboard.onceboard_gaps_upsert(deltas text, unit text, target text)
RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT format('WITH d AS (SELECT date_trunc(%L, minute, ''UTC'') AS t, job_type, gap_buckets, gap_seconds_sum,
                            claims_beyond_retention FROM (%s) AS x),
  elems AS (
    SELECT d.t, d.job_type, u.i, sum(u.b)::bigint AS b
      FROM d, unnest(d.gap_buckets) WITH ORDINALITY AS u(b, i)
     GROUP BY d.t, d.job_type, u.i
  ), arrays AS (
    SELECT t, job_type, array_agg(b ORDER BY i) AS buckets FROM elems GROUP BY t, job_type
  ), totals AS (
    SELECT t, job_type, sum(gap_seconds_sum) AS gap_sum, sum(claims_beyond_retention)::bigint AS beyond
      FROM d GROUP BY t, job_type
  )
  INSERT INTO onceboard.%I AS g (%I, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention)
  SELECT tt.t, tt.job_type, coalesce(a.buckets, ''{}''), tt.gap_sum, tt.beyond
    FROM totals tt LEFT JOIN arrays a USING (t, job_type)
  ON CONFLICT (%I, job_type) DO UPDATE SET
    gap_buckets = onceboard.onceboard_add_counts(g.gap_buckets, EXCLUDED.gap_buckets),
    gap_seconds_sum = g.gap_seconds_sum + EXCLUDED.gap_seconds_sum,
    claims_beyond_retention = g.claims_beyond_retention + EXCLUDED.claims_beyond_retention', unit, deltas, target, unit, unit)
$$;

CREATE OR REPLACE FUNCTION onceboard.onceboard_latency_to_hour() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO onceboard.claim_latency_hour AS h (hour, job_type, buckets)
  VALUES (date_trunc('hour', NEW.minute), NEW.job_type,
          CASE WHEN TG_OP = 'UPDATE' THEN onceboard.onceboard_sub_counts(NEW.buckets, OLD.buckets) ELSE NEW.buckets END)
  ON CONFLICT (hour, job_type) DO UPDATE SET buckets = onceboard.onceboard_add_counts(h.buckets, EXCLUDED.buckets);
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION onceboard.onceboard_stats_to_hour() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO onceboard.worker_stats_hour AS h (hour, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed,
           key_reuse, uncaught_violations, deliveries, redeliveries, claim_seconds_sum)
    VALUES (date_trunc('hour', NEW.minute), NEW.job_type, NEW.claims - OLD.claims, NEW.suppressed - OLD.suppressed,
            NEW.in_flight - OLD.in_flight, NEW.takeovers - OLD.takeovers, NEW.abandoned - OLD.abandoned,
            NEW.failed - OLD.failed, NEW.key_reuse - OLD.key_reuse, NEW.uncaught_violations - OLD.uncaught_violations,
            NEW.deliveries - OLD.deliveries, NEW.redeliveries - OLD.redeliveries,
            NEW.claim_seconds_sum - OLD.claim_seconds_sum)
    ON CONFLICT (hour, job_type) DO UPDATE SET
      claims = h.claims + EXCLUDED.claims, suppressed = h.suppressed + EXCLUDED.suppressed,
      in_flight = h.in_flight + EXCLUDED.in_flight, takeovers = h.takeovers + EXCLUDED.takeovers,
      abandoned = h.abandoned + EXCLUDED.abandoned, failed = h.failed + EXCLUDED.failed,
      key_reuse = h.key_reuse + EXCLUDED.key_reuse, uncaught_violations = h.uncaught_violations + EXCLUDED.uncaught_violations,
      deliveries = h.deliveries + EXCLUDED.deliveries, redeliveries = h.redeliveries + EXCLUDED.redeliveries,
      claim_seconds_sum = h.claim_seconds_sum + EXCLUDED.claim_seconds_sum;
  ELSE
    INSERT INTO onceboard.worker_stats_hour AS h (hour, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed,
           key_reuse, uncaught_violations, deliveries, redeliveries, claim_seconds_sum)
    VALUES (date_trunc('hour', NEW.minute), NEW.job_type, NEW.claims, NEW.suppressed, NEW.in_flight, NEW.takeovers,
            NEW.abandoned, NEW.failed, NEW.key_reuse, NEW.uncaught_violations, NEW.deliveries, NEW.redeliveries,
            NEW.claim_seconds_sum)
    ON CONFLICT (hour, job_type) DO UPDATE SET
      claims = h.claims + EXCLUDED.claims, suppressed = h.suppressed + EXCLUDED.suppressed,
      in_flight = h.in_flight + EXCLUDED.in_flight, takeovers = h.takeovers + EXCLUDED.takeovers,
      abandoned = h.abandoned + EXCLUDED.abandoned, failed = h.failed + EXCLUDED.failed,
      key_reuse = h.key_reuse + EXCLUDED.key_reuse, uncaught_violations = h.uncaught_violations + EXCLUDED.uncaught_violations,
      deliveries = h.deliveries + EXCLUDED.deliveries, redeliveries = h.redeliveries + EXCLUDED.redeliveries,
      claim_seconds_sum = h.claim_seconds_sum + EXCLUDED.claim_seconds_sum;
  END IF;
  RETURN NULL;
END;
$$;

-- Element-wise a - b (for the hourly trigger: an upsert's increment is NEW minus OLD).
CREATE OR REPLACE FUNCTION onceboard.onceboard_sub_counts(a bigint[], b bigint[])
RETURNS bigint[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_agg(coalesce(a[i], 0) - coalesce(b[i], 0) ORDER BY i), '{}')
  FROM generate_series(1, greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0))) AS i
$$;

CREATE TRIGGER worker_stats_minute_gaps_insert AFTER INSERT ON onceboard.worker_stats_minute
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION onceboard.onceboard_gaps_hour_on_insert();
CREATE TRIGGER worker_stats_minute_gaps_update AFTER UPDATE ON onceboard.worker_stats_minute
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION onceboard.onceboard_gaps_hour_on_update();
CREATE TRIGGER worker_stats_minute_gaps_delete AFTER DELETE ON onceboard.worker_stats_minute
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION onceboard.onceboard_gaps_hour_on_delete();
CREATE TRIGGER worker_stats_minute_to_hour AFTER INSERT OR UPDATE ON onceboard.worker_stats_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_stats_to_hour();
CREATE TRIGGER claim_latency_minute_to_hour AFTER INSERT OR UPDATE ON onceboard.claim_latency_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_latency_to_hour();
