-- Issue 13 (the on-call Overview): hourly rollups for long ranges, claim-latency buckets for
-- p50/p99, and a tenant dimension for the rare counters only. Cost per claim and per row:
-- docs/operations.md, "The Overview's numbers".

-- Upper bounds, in seconds, of the claim-duration buckets stored in claim_latency_minute.buckets
-- (then +Inf): the same list as idem_claim_duration_seconds in lib/idempotency/metrics.ts.
CREATE FUNCTION onceboard_claim_bucket_bounds()
RETURNS double precision[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]::double precision[]
$$;

-- Claim durations per minute and job type, as histogram bucket counts (not cumulative).
CREATE TABLE claim_latency_minute (
  minute    timestamptz NOT NULL,
  job_type  text        NOT NULL,
  buckets   bigint[]    NOT NULL DEFAULT '{}',
  CONSTRAINT claim_latency_minute_pkey PRIMARY KEY (minute, job_type)
);

-- worker_stats_minute summed per hour, kept by a trigger (one extra upsert per rollup upsert, not
-- per claim): a 30-day chart reads 720 rows per job type instead of 43,200.
CREATE TABLE worker_stats_hour (
  hour                 timestamptz      NOT NULL,
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
  claim_seconds_sum    double precision NOT NULL DEFAULT 0,
  CONSTRAINT worker_stats_hour_pkey PRIMARY KEY (hour, job_type)
);

CREATE TABLE claim_latency_hour (
  hour      timestamptz NOT NULL,
  job_type  text        NOT NULL,
  buckets   bigint[]    NOT NULL DEFAULT '{}',
  CONSTRAINT claim_latency_hour_pkey PRIMARY KEY (hour, job_type)
);

-- Element-wise a - b (for the hourly trigger: an upsert's increment is NEW minus OLD).
CREATE OR REPLACE FUNCTION onceboard_sub_counts(a bigint[], b bigint[])
RETURNS bigint[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_agg(coalesce(a[i], 0) - coalesce(b[i], 0) ORDER BY i), '{}')
  FROM generate_series(1, greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0))) AS i
$$;

CREATE FUNCTION onceboard_stats_to_hour() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO worker_stats_hour AS h (hour, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed,
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
    INSERT INTO worker_stats_hour AS h (hour, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed,
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

CREATE TRIGGER worker_stats_minute_to_hour AFTER INSERT OR UPDATE ON worker_stats_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard_stats_to_hour();

CREATE FUNCTION onceboard_latency_to_hour() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO claim_latency_hour AS h (hour, job_type, buckets)
  VALUES (date_trunc('hour', NEW.minute), NEW.job_type,
          CASE WHEN TG_OP = 'UPDATE' THEN onceboard_sub_counts(NEW.buckets, OLD.buckets) ELSE NEW.buckets END)
  ON CONFLICT (hour, job_type) DO UPDATE SET buckets = onceboard_add_counts(h.buckets, EXCLUDED.buckets);
  RETURN NULL;
END;
$$;

CREATE TRIGGER claim_latency_minute_to_hour AFTER INSERT OR UPDATE ON claim_latency_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard_latency_to_hour();

-- Existing minutes, summed once.
INSERT INTO worker_stats_hour (hour, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed, key_reuse,
       uncaught_violations, deliveries, redeliveries, claim_seconds_sum)
SELECT date_trunc('hour', minute), job_type, sum(claims), sum(suppressed), sum(in_flight), sum(takeovers), sum(abandoned),
       sum(failed), sum(key_reuse), sum(uncaught_violations), sum(deliveries), sum(redeliveries), sum(claim_seconds_sum)
  FROM worker_stats_minute GROUP BY 1, 2;

-- The tenant dimension, only for the rare counters and per hour: a row exists only where a tenant
-- had a suppression (or a violation) that hour, so 10,000 quiet tenants cost nothing and a busy
-- one costs at most 24 rows per job type per day.
CREATE TABLE tenant_suppressions_hour (
  hour       timestamptz NOT NULL,
  tenant_id  text        NOT NULL,
  job_type   text        NOT NULL,
  count      bigint      NOT NULL DEFAULT 0,
  CONSTRAINT tenant_suppressions_hour_pkey PRIMARY KEY (hour, tenant_id, job_type)
);
CREATE INDEX tenant_suppressions_hour_tenant_idx ON tenant_suppressions_hour (tenant_id, hour);

-- Uncaught unique violations per tenant and constraint, with the last key that hit it (the
-- Overview links it to the Keys page).
CREATE TABLE tenant_violations_hour (
  hour             timestamptz NOT NULL,
  tenant_id        text        NOT NULL,
  job_type         text        NOT NULL,
  constraint_name  text        NOT NULL,
  count            bigint      NOT NULL DEFAULT 0,
  last_key         text        NOT NULL,
  last_seen        timestamptz NOT NULL,
  CONSTRAINT tenant_violations_hour_pkey PRIMARY KEY (hour, tenant_id, job_type, constraint_name)
);
CREATE INDEX tenant_violations_hour_tenant_idx ON tenant_violations_hour (tenant_id, hour);

-- The OnceboardLateDuplicates rule over the rollups looks for minutes holding a gap above two days
-- in the last day: a partial index holds only those (rare) rows, so the look skips 72,000 others.
CREATE INDEX worker_stats_minute_late_gap_idx ON worker_stats_minute (minute) WHERE gap_seconds_sum >= 172800;
