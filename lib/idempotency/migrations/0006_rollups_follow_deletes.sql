-- Issue 13: every number on the Overview agrees with the others, before and after demo:reset.
--  * Every derived level follows DELETEs of its source rows, as worker_stats_hour does since 0004:
--    worker_stats_10m, claim_latency_10m, claim_latency_hour and tenant_suppressions_day subtract a
--    deleted row and drop a bucket left without counts. (Nothing prunes the minute tables; deleting
--    their rows now takes the counts out of every level.)
--  * demo is part of every source table's key, so a demo count and a real one never share a row
--    and demo:reset deletes exactly the demo's: worker_stats_minute and uncaught_violations_minute
--    had a demo flag that one real write into the row cleared, claim_latency_minute,
--    tenant_suppressions_hour and tenant_violations_hour had none. Rows already there are marked
--    demo where worker_stats_minute says the demo alone ran that job type then.

ALTER TABLE onceboard.worker_stats_minute
  DROP CONSTRAINT worker_stats_minute_pkey,
  ADD CONSTRAINT worker_stats_minute_pkey PRIMARY KEY (minute, job_type, demo);
ALTER TABLE onceboard.uncaught_violations_minute
  DROP CONSTRAINT uncaught_violations_minute_pkey,
  ADD CONSTRAINT uncaught_violations_minute_pkey PRIMARY KEY (minute, job_type, constraint_name, demo);
ALTER TABLE onceboard.claim_latency_minute
  ADD COLUMN demo boolean NOT NULL DEFAULT false,
  DROP CONSTRAINT claim_latency_minute_pkey,
  ADD CONSTRAINT claim_latency_minute_pkey PRIMARY KEY (minute, job_type, demo);
ALTER TABLE onceboard.tenant_suppressions_hour
  ADD COLUMN demo boolean NOT NULL DEFAULT false,
  DROP CONSTRAINT tenant_suppressions_hour_pkey,
  ADD CONSTRAINT tenant_suppressions_hour_pkey PRIMARY KEY (hour, tenant_id, job_type, demo);
ALTER TABLE onceboard.tenant_violations_hour
  ADD COLUMN demo boolean NOT NULL DEFAULT false,
  DROP CONSTRAINT tenant_violations_hour_pkey,
  ADD CONSTRAINT tenant_violations_hour_pkey PRIMARY KEY (hour, tenant_id, job_type, constraint_name, demo);

DROP TRIGGER worker_stats_minute_to_10m ON onceboard.worker_stats_minute;
DROP TRIGGER claim_latency_minute_to_10m ON onceboard.claim_latency_minute;
DROP TRIGGER claim_latency_minute_to_hour ON onceboard.claim_latency_minute;
DROP TRIGGER tenant_suppressions_hour_to_day ON onceboard.tenant_suppressions_hour;

UPDATE onceboard.claim_latency_minute l SET demo = true
 WHERE EXISTS (SELECT 1 FROM onceboard.worker_stats_minute w WHERE w.minute = l.minute AND w.job_type = l.job_type AND w.demo);
UPDATE onceboard.tenant_suppressions_hour t SET demo = true
 WHERE EXISTS (SELECT 1 FROM onceboard.worker_stats_minute w
                WHERE w.job_type = t.job_type AND w.minute >= t.hour AND w.minute < t.hour + interval '1 hour' AND w.demo)
   AND NOT EXISTS (SELECT 1 FROM onceboard.worker_stats_minute w
                    WHERE w.job_type = t.job_type AND w.minute >= t.hour AND w.minute < t.hour + interval '1 hour' AND NOT w.demo);
UPDATE onceboard.tenant_violations_hour t SET demo = true
 WHERE EXISTS (SELECT 1 FROM onceboard.worker_stats_minute w
                WHERE w.job_type = t.job_type AND w.minute >= t.hour AND w.minute < t.hour + interval '1 hour' AND w.demo)
   AND NOT EXISTS (SELECT 1 FROM onceboard.worker_stats_minute w
                    WHERE w.job_type = t.job_type AND w.minute >= t.hour AND w.minute < t.hour + interval '1 hour' AND NOT w.demo);

-- Stamped by `npm run db:stamp` from lib/idempotency/sql/ (onceboard_latency_to_10m.sql, onceboard_latency_to_hour.sql, onceboard_stats_to_10m.sql, onceboard_tenant_suppressions_to_day.sql):
-- edit those sources, never this migration. Objects are named onceboard.<name>: migrate() rewrites that.

-- onceboard_latency_to_10m: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The same for the claim-latency histogram: each claim_latency_minute row change's increment (NEW
-- minus OLD), added to its ten-minute bucket; a bucket a DELETE leaves without samples goes.
CREATE OR REPLACE FUNCTION onceboard.onceboard_latency_to_10m() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.claim_latency_minute;
  o onceboard.claim_latency_minute;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.claim_latency_10m AS t (bucket, job_type, buckets)
  VALUES (date_bin('10 minutes', coalesce(n.minute, o.minute), timestamptz '2000-01-01 00:00:00+00'), coalesce(n.job_type, o.job_type),
          CASE WHEN TG_OP = 'INSERT' THEN n.buckets ELSE onceboard.onceboard_sub_counts(coalesce(n.buckets, '{}'), o.buckets) END)
  ON CONFLICT (bucket, job_type) DO UPDATE SET buckets = onceboard.onceboard_add_counts(t.buckets, EXCLUDED.buckets);
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.claim_latency_10m t
     WHERE t.bucket = date_bin('10 minutes', OLD.minute, timestamptz '2000-01-01 00:00:00+00') AND t.job_type = OLD.job_type
       AND 0 = ALL (t.buckets);
  END IF;
  RETURN NULL;
END;
$$;
-- onceboard_latency_to_hour: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps claim_latency_hour the exact sum of claim_latency_minute per UTC hour: each row change's
-- increment (NEW minus OLD), added element-wise; an hour a DELETE leaves without samples goes.
CREATE OR REPLACE FUNCTION onceboard.onceboard_latency_to_hour() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.claim_latency_minute;
  o onceboard.claim_latency_minute;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.claim_latency_hour AS h (hour, job_type, buckets)
  VALUES (date_trunc('hour', coalesce(n.minute, o.minute), 'UTC'), coalesce(n.job_type, o.job_type),
          CASE WHEN TG_OP = 'INSERT' THEN n.buckets ELSE onceboard.onceboard_sub_counts(coalesce(n.buckets, '{}'), o.buckets) END)
  ON CONFLICT (hour, job_type) DO UPDATE SET buckets = onceboard.onceboard_add_counts(h.buckets, EXCLUDED.buckets);
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.claim_latency_hour h
     WHERE h.hour = date_trunc('hour', OLD.minute, 'UTC') AND h.job_type = OLD.job_type AND 0 = ALL (h.buckets);
  END IF;
  RETURN NULL;
END;
$$;
-- onceboard_stats_to_10m: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps worker_stats_10m the exact sum of worker_stats_minute per ten-minute UTC bucket: the
-- Overview charts 24 hours in 10-minute steps without reading a day of minutes. Each row change
-- adds its increment, NEW minus OLD (an INSERT has no OLD, a DELETE no NEW); a DELETE that leaves a
-- bucket without any count removes it, so demo:reset takes the demo's counts out of this level too.
CREATE OR REPLACE FUNCTION onceboard.onceboard_stats_to_10m() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.worker_stats_minute;
  o onceboard.worker_stats_minute;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.worker_stats_10m AS t (bucket, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries)
  VALUES (date_bin('10 minutes', coalesce(n.minute, o.minute), timestamptz '2000-01-01 00:00:00+00'), coalesce(n.job_type, o.job_type),
          coalesce(n.claims, 0) - coalesce(o.claims, 0), coalesce(n.suppressed, 0) - coalesce(o.suppressed, 0),
          coalesce(n.in_flight, 0) - coalesce(o.in_flight, 0), coalesce(n.takeovers, 0) - coalesce(o.takeovers, 0),
          coalesce(n.deliveries, 0) - coalesce(o.deliveries, 0), coalesce(n.redeliveries, 0) - coalesce(o.redeliveries, 0))
  ON CONFLICT (bucket, job_type) DO UPDATE SET
    claims = t.claims + EXCLUDED.claims, suppressed = t.suppressed + EXCLUDED.suppressed,
    in_flight = t.in_flight + EXCLUDED.in_flight, takeovers = t.takeovers + EXCLUDED.takeovers,
    deliveries = t.deliveries + EXCLUDED.deliveries, redeliveries = t.redeliveries + EXCLUDED.redeliveries;
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.worker_stats_10m t
     WHERE t.bucket = date_bin('10 minutes', OLD.minute, timestamptz '2000-01-01 00:00:00+00') AND t.job_type = OLD.job_type
       AND t.claims = 0 AND t.suppressed = 0 AND t.in_flight = 0 AND t.takeovers = 0 AND t.deliveries = 0 AND t.redeliveries = 0;
  END IF;
  RETURN NULL;
END;
$$;
-- onceboard_tenant_suppressions_to_day: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Keeps tenant_suppressions_day the sum of tenant_suppressions_hour per tenant and UTC day (all job
-- types together): "which tenant" over 30 days reads 30 rows per tenant instead of 720 per job
-- type. Each row change adds NEW minus OLD; a day a DELETE brings to zero goes, so a tenant the
-- demo alone had leaves the ranking with demo:reset.
CREATE OR REPLACE FUNCTION onceboard.onceboard_tenant_suppressions_to_day() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  n onceboard.tenant_suppressions_hour;
  o onceboard.tenant_suppressions_hour;
BEGIN
  IF TG_OP <> 'DELETE' THEN n := NEW; END IF;
  IF TG_OP <> 'INSERT' THEN o := OLD; END IF;
  INSERT INTO onceboard.tenant_suppressions_day AS t (day, tenant_id, count)
  VALUES (date_bin('1 day', coalesce(n.hour, o.hour), timestamptz '2000-01-01 00:00:00+00'), coalesce(n.tenant_id, o.tenant_id),
          coalesce(n.count, 0) - coalesce(o.count, 0))
  ON CONFLICT (day, tenant_id) DO UPDATE SET count = t.count + EXCLUDED.count;
  IF TG_OP = 'DELETE' THEN
    DELETE FROM onceboard.tenant_suppressions_day t
     WHERE t.day = date_bin('1 day', OLD.hour, timestamptz '2000-01-01 00:00:00+00') AND t.tenant_id = OLD.tenant_id AND t.count = 0;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER worker_stats_minute_to_10m AFTER INSERT OR UPDATE OR DELETE ON onceboard.worker_stats_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_stats_to_10m();
CREATE TRIGGER claim_latency_minute_to_10m AFTER INSERT OR UPDATE OR DELETE ON onceboard.claim_latency_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_latency_to_10m();
CREATE TRIGGER claim_latency_minute_to_hour AFTER INSERT OR UPDATE OR DELETE ON onceboard.claim_latency_minute
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_latency_to_hour();
CREATE TRIGGER tenant_suppressions_hour_to_day AFTER INSERT OR UPDATE OR DELETE ON onceboard.tenant_suppressions_hour
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_tenant_suppressions_to_day();
