-- A six-hour rollup level for the Overview (issue 42, bench:console), kept by triggers exactly as the
-- ten-minute one is: worker_stats_6h / claim_latency_6h, six-hour UTC sums of worker_stats_minute
-- (the counters the Overview charts) and claim_latency_minute. A 30-day chart steps 6 hours at its
-- default 720 px: its three rollup statements read 120 rows per job type instead of 720 hourly ones
-- (6,000 instead of 36,000 for 50 job types; the latency sums and the stacked suppression lines
-- were the slowest statements of the 30-day read). The Overview reads a level only when its unit
-- divides the step and the step-aligned origin, so every point is whole buckets: a 6-hour level
-- answers 6-hour, 12-hour and daily steps exactly; finer steps read the hours as before.
-- Cost: one more single-row upsert per minute-row upsert on each table (a flush's statement, never
-- a claim's), on the same (bucket, job_type) keys the hourly level already shares between workers.
-- Buckets are UTC (date_bin from 2000-01-01 00:00 UTC, a multiple of 6 hours after the epoch). Like
-- the other levels they follow DELETEs of the minute rows (demo:reset). PostgreSQL only: the MySQL
-- store keeps no trigger-made levels. Plain tables on Citus, like every rollup (distributeForCitus).

CREATE TABLE onceboard.worker_stats_6h (
  bucket       timestamptz NOT NULL,
  job_type     text        NOT NULL,
  claims       bigint      NOT NULL DEFAULT 0,
  suppressed   bigint      NOT NULL DEFAULT 0,
  in_flight    bigint      NOT NULL DEFAULT 0,
  takeovers    bigint      NOT NULL DEFAULT 0,
  deliveries   bigint      NOT NULL DEFAULT 0,
  redeliveries bigint      NOT NULL DEFAULT 0,
  CONSTRAINT worker_stats_6h_pkey PRIMARY KEY (bucket, job_type)
);

CREATE TABLE onceboard.claim_latency_6h (
  bucket   timestamptz NOT NULL,
  job_type text        NOT NULL,
  buckets  bigint[]    NOT NULL DEFAULT '{}'::bigint[],
  CONSTRAINT claim_latency_6h_pkey PRIMARY KEY (bucket, job_type)
);

-- Stamped by `npm run db:stamp` from lib/idempotency/sql/ (onceboard_latency_to_6h.sql, onceboard_stats_to_6h.sql):
-- edit those sources, never this migration. Objects are named onceboard.<name>: migrate() rewrites that.

-- onceboard_latency_to_6h: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The same for the claim-latency histogram: each claim_latency_minute row change's increment (NEW
-- minus OLD), added to its six-hour bucket; a bucket a DELETE leaves without samples goes.
CREATE OR REPLACE FUNCTION onceboard.onceboard_latency_to_6h() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.claim_latency_minute;
  o onceboard.claim_latency_minute;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.claim_latency_6h AS t (bucket, job_type, buckets)
  VALUES (date_bin('6 hours', coalesce(n.minute, o.minute), timestamptz '2000-01-01 00:00:00+00'), coalesce(n.job_type, o.job_type),
          CASE WHEN TG_OP = 'INSERT' THEN n.buckets ELSE onceboard.onceboard_sub_counts(coalesce(n.buckets, '{}'), o.buckets) END)
  ON CONFLICT (bucket, job_type) DO UPDATE SET buckets = onceboard.onceboard_add_counts(t.buckets, EXCLUDED.buckets);
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.claim_latency_6h t
     WHERE t.bucket = date_bin('6 hours', OLD.minute, timestamptz '2000-01-01 00:00:00+00') AND t.job_type = OLD.job_type
       AND 0 = ALL (t.buckets);
  END IF;
  RETURN NULL;
END;
$$;
-- onceboard_stats_to_6h: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps worker_stats_6h the exact sum of worker_stats_minute per six-hour UTC bucket: the Overview
-- charts 30 days in 6-hour steps from 120 rows per job type instead of 720 hourly ones. Each row
-- change adds its increment, NEW minus OLD (an INSERT has no OLD, a DELETE no NEW); a DELETE that
-- leaves a bucket without any count removes it, so demo:reset takes the demo's counts out of this
-- level too.
CREATE OR REPLACE FUNCTION onceboard.onceboard_stats_to_6h() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.worker_stats_minute;
  o onceboard.worker_stats_minute;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.worker_stats_6h AS t (bucket, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries)
  VALUES (date_bin('6 hours', coalesce(n.minute, o.minute), timestamptz '2000-01-01 00:00:00+00'), coalesce(n.job_type, o.job_type),
          coalesce(n.claims, 0) - coalesce(o.claims, 0), coalesce(n.suppressed, 0) - coalesce(o.suppressed, 0),
          coalesce(n.in_flight, 0) - coalesce(o.in_flight, 0), coalesce(n.takeovers, 0) - coalesce(o.takeovers, 0),
          coalesce(n.deliveries, 0) - coalesce(o.deliveries, 0), coalesce(n.redeliveries, 0) - coalesce(o.redeliveries, 0))
  ON CONFLICT (bucket, job_type) DO UPDATE SET
    claims = t.claims + EXCLUDED.claims, suppressed = t.suppressed + EXCLUDED.suppressed,
    in_flight = t.in_flight + EXCLUDED.in_flight, takeovers = t.takeovers + EXCLUDED.takeovers,
    deliveries = t.deliveries + EXCLUDED.deliveries, redeliveries = t.redeliveries + EXCLUDED.redeliveries;
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.worker_stats_6h t
     WHERE t.bucket = date_bin('6 hours', OLD.minute, timestamptz '2000-01-01 00:00:00+00') AND t.job_type = OLD.job_type
       AND t.claims = 0 AND t.suppressed = 0 AND t.in_flight = 0 AND t.takeovers = 0 AND t.deliveries = 0 AND t.redeliveries = 0;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER worker_stats_minute_to_6h AFTER INSERT OR UPDATE OR DELETE ON onceboard.worker_stats_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_stats_to_6h();
CREATE TRIGGER claim_latency_minute_to_6h AFTER INSERT OR UPDATE OR DELETE ON onceboard.claim_latency_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_latency_to_6h();

-- What the triggers would have written for the rows already there, summed from the hourly level
-- (the exact sum of the minutes per UTC hour, kept by its triggers since 0001, following deletes
-- since 0006; six whole hours make a six-hour bucket): 1/60 of the rows the minutes would be, so
-- the flushes waiting on the new triggers' lock wait a moment, not the scan of every minute row
-- (22 s for 30 days of 50 job types on a 2-core machine). In the migration's transaction, after the
-- triggers: no minute is counted twice or missed.
INSERT INTO onceboard.worker_stats_6h (bucket, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries)
SELECT date_bin('6 hours', hour, timestamptz '2000-01-01 00:00:00+00'), job_type,
       sum(claims), sum(suppressed), sum(in_flight), sum(takeovers), sum(deliveries), sum(redeliveries)
  FROM onceboard.worker_stats_hour GROUP BY 1, 2;

INSERT INTO onceboard.claim_latency_6h (bucket, job_type, buckets)
SELECT b, job_type, array_agg(n ORDER BY i)
  FROM (SELECT date_bin('6 hours', hour, timestamptz '2000-01-01 00:00:00+00') AS b, job_type, i, sum(x)::bigint AS n
          FROM onceboard.claim_latency_hour, unnest(buckets) WITH ORDINALITY AS u(x, i)
         GROUP BY 1, 2, 3) s
 GROUP BY 1, 2;
