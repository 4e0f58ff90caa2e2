-- Two coarser rollup levels for the Overview (issue 13, bench:console), kept by triggers exactly as
-- the hourly ones are, so the Overview never reads a day of minutes:
--  * worker_stats_10m / claim_latency_10m: ten-minute sums of worker_stats_minute (the counters the
--    Overview charts) and claim_latency_minute. A 24-hour chart steps 10 minutes at 720 px: 144 rows
--    per job type instead of 1,440.
--  * tenant_suppressions_day: per tenant and UTC day, all job types together. "Which tenant" over
--    30 days reads 30 rows per tenant plus the hours at the edges, instead of 720 per tenant and job
--    type. A jobType filter still reads the hourly table. Cost: one more single-row upsert per
--    tenant-hour upsert; at most one row per tenant and day.
-- Buckets are UTC (date_bin from 2000-01-01 00:00 UTC). Like the hourly triggers these add each
-- upsert's increment (NEW minus OLD) and ignore DELETE. The trigger functions' one sources are
-- lib/idempotency/sql/onceboard_{stats_to_10m,latency_to_10m,tenant_suppressions_to_day}.sql.

CREATE TABLE onceboard.worker_stats_10m (
  bucket       timestamptz NOT NULL,
  job_type     text        NOT NULL,
  claims       bigint      NOT NULL DEFAULT 0,
  suppressed   bigint      NOT NULL DEFAULT 0,
  in_flight    bigint      NOT NULL DEFAULT 0,
  takeovers    bigint      NOT NULL DEFAULT 0,
  deliveries   bigint      NOT NULL DEFAULT 0,
  redeliveries bigint      NOT NULL DEFAULT 0,
  CONSTRAINT worker_stats_10m_pkey PRIMARY KEY (bucket, job_type)
);

CREATE TABLE onceboard.claim_latency_10m (
  bucket   timestamptz NOT NULL,
  job_type text        NOT NULL,
  buckets  bigint[]    NOT NULL DEFAULT '{}'::bigint[],
  CONSTRAINT claim_latency_10m_pkey PRIMARY KEY (bucket, job_type)
);

CREATE TABLE onceboard.tenant_suppressions_day (
  day       timestamptz NOT NULL,
  tenant_id text        NOT NULL,
  count     bigint      NOT NULL DEFAULT 0,
  CONSTRAINT tenant_suppressions_day_pkey PRIMARY KEY (day, tenant_id)
);

-- Adds each worker_stats_minute upsert's increment (NEW minus OLD) to its ten-minute bucket: the
-- Overview charts 24 hours in 10-minute steps without reading a day of minutes. Buckets are UTC.
CREATE OR REPLACE FUNCTION onceboard.onceboard_stats_to_10m() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO onceboard.worker_stats_10m AS t (bucket, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries)
    VALUES (date_bin('10 minutes', NEW.minute, timestamptz '2000-01-01 00:00:00+00'), NEW.job_type,
            NEW.claims - OLD.claims, NEW.suppressed - OLD.suppressed, NEW.in_flight - OLD.in_flight,
            NEW.takeovers - OLD.takeovers, NEW.deliveries - OLD.deliveries, NEW.redeliveries - OLD.redeliveries)
    ON CONFLICT (bucket, job_type) DO UPDATE SET
      claims = t.claims + EXCLUDED.claims, suppressed = t.suppressed + EXCLUDED.suppressed,
      in_flight = t.in_flight + EXCLUDED.in_flight, takeovers = t.takeovers + EXCLUDED.takeovers,
      deliveries = t.deliveries + EXCLUDED.deliveries, redeliveries = t.redeliveries + EXCLUDED.redeliveries;
  ELSE
    INSERT INTO onceboard.worker_stats_10m AS t (bucket, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries)
    VALUES (date_bin('10 minutes', NEW.minute, timestamptz '2000-01-01 00:00:00+00'), NEW.job_type,
            NEW.claims, NEW.suppressed, NEW.in_flight, NEW.takeovers, NEW.deliveries, NEW.redeliveries)
    ON CONFLICT (bucket, job_type) DO UPDATE SET
      claims = t.claims + EXCLUDED.claims, suppressed = t.suppressed + EXCLUDED.suppressed,
      in_flight = t.in_flight + EXCLUDED.in_flight, takeovers = t.takeovers + EXCLUDED.takeovers,
      deliveries = t.deliveries + EXCLUDED.deliveries, redeliveries = t.redeliveries + EXCLUDED.redeliveries;
  END IF;
  RETURN NULL;
END;
$$;

-- The same for the claim-latency histogram: each claim_latency_minute upsert's increment, added
-- to its ten-minute bucket.
CREATE OR REPLACE FUNCTION onceboard.onceboard_latency_to_10m() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO onceboard.claim_latency_10m AS t (bucket, job_type, buckets)
  VALUES (date_bin('10 minutes', NEW.minute, timestamptz '2000-01-01 00:00:00+00'), NEW.job_type,
          CASE WHEN TG_OP = 'UPDATE' THEN onceboard.onceboard_sub_counts(NEW.buckets, OLD.buckets) ELSE NEW.buckets END)
  ON CONFLICT (bucket, job_type) DO UPDATE SET buckets = onceboard.onceboard_add_counts(t.buckets, EXCLUDED.buckets);
  RETURN NULL;
END;
$$;

-- Adds each tenant_suppressions_hour upsert's increment to the tenant's UTC day (all job types
-- together): "which tenant" over 30 days reads 30 rows per tenant instead of 720 per job type.
CREATE OR REPLACE FUNCTION onceboard.onceboard_tenant_suppressions_to_day() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO onceboard.tenant_suppressions_day AS t (day, tenant_id, count)
  VALUES (date_bin('1 day', NEW.hour, timestamptz '2000-01-01 00:00:00+00'), NEW.tenant_id,
          NEW.count - CASE WHEN TG_OP = 'UPDATE' THEN OLD.count ELSE 0 END)
  ON CONFLICT (day, tenant_id) DO UPDATE SET count = t.count + EXCLUDED.count;
  RETURN NULL;
END;
$$;

CREATE TRIGGER worker_stats_minute_to_10m AFTER INSERT OR UPDATE ON onceboard.worker_stats_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_stats_to_10m();
CREATE TRIGGER claim_latency_minute_to_10m AFTER INSERT OR UPDATE ON onceboard.claim_latency_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_latency_to_10m();
CREATE TRIGGER tenant_suppressions_hour_to_day AFTER INSERT OR UPDATE ON onceboard.tenant_suppressions_hour
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_tenant_suppressions_to_day();

-- What the triggers would have written for the rows already there.
INSERT INTO onceboard.worker_stats_10m (bucket, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries)
SELECT date_bin('10 minutes', minute, timestamptz '2000-01-01 00:00:00+00'), job_type,
       sum(claims), sum(suppressed), sum(in_flight), sum(takeovers), sum(deliveries), sum(redeliveries)
  FROM onceboard.worker_stats_minute GROUP BY 1, 2;

INSERT INTO onceboard.claim_latency_10m (bucket, job_type, buckets)
SELECT b, job_type, array_agg(n ORDER BY i)
  FROM (SELECT date_bin('10 minutes', minute, timestamptz '2000-01-01 00:00:00+00') AS b, job_type, i, sum(x)::bigint AS n
          FROM onceboard.claim_latency_minute, unnest(buckets) WITH ORDINALITY AS u(x, i)
         GROUP BY 1, 2, 3) s
 GROUP BY 1, 2;

INSERT INTO onceboard.tenant_suppressions_day (day, tenant_id, count)
SELECT date_bin('1 day', hour, timestamptz '2000-01-01 00:00:00+00'), tenant_id, sum(count)
  FROM onceboard.tenant_suppressions_hour GROUP BY 1, 2;
