-- Delivery gaps and the retention advisor (issue 12).
--
-- 1. claims_beyond_retention: claims whose delivery carried a publish time older than the
--    retention (the duplicates Onceboard could not have recognised once the record is pruned).
--    Written by the worker library's rollup flush, like every other counter.
ALTER TABLE worker_stats_minute ADD COLUMN claims_beyond_retention bigint NOT NULL DEFAULT 0;

-- 2. worker_gaps_hour and worker_gaps_day: the gap histogram summed per hour / per UTC day and job type, kept exact by statement
--    triggers on worker_stats_minute. Why: 30 days of per-minute rows for 50 job types is 2.16
--    million rows; summing their arrays on every page view takes seconds, summing 36,000 hour
--    rows takes milliseconds. The console reads whole hours from here and the partial hours at
--    the window's edges from worker_stats_minute.
--    Statement-level triggers with transition tables: one extra upsert per flush statement (a
--    flush writes one minute row per job type), not per row; ON CONFLICT DO UPDATE fires the
--    INSERT trigger for inserted rows and the UPDATE trigger for updated ones.
CREATE TABLE worker_gaps_hour (
  hour                     timestamptz      NOT NULL,
  job_type                 text             NOT NULL,
  gap_buckets              bigint[]         NOT NULL DEFAULT '{}',
  gap_seconds_sum          double precision NOT NULL DEFAULT 0,
  claims_beyond_retention  bigint           NOT NULL DEFAULT 0,
  CONSTRAINT worker_gaps_hour_pkey PRIMARY KEY (hour, job_type)
);

-- The same per UTC day: 30 days × 50 job types is 1,500 rows. The console reads whole days from
-- here, whole hours at the window's edges from worker_gaps_hour, and minutes at the very edges.
CREATE TABLE worker_gaps_day (
  day                      timestamptz      NOT NULL,
  job_type                 text             NOT NULL,
  gap_buckets              bigint[]         NOT NULL DEFAULT '{}',
  gap_seconds_sum          double precision NOT NULL DEFAULT 0,
  claims_beyond_retention  bigint           NOT NULL DEFAULT 0,
  CONSTRAINT worker_gaps_day_pkey PRIMARY KEY (day, job_type)
);

-- Element-wise a - b (for the UPDATE and DELETE triggers).
CREATE FUNCTION onceboard_sub_counts(a bigint[], b bigint[])
RETURNS bigint[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_agg(coalesce(a[i], 0) - coalesce(b[i], 0) ORDER BY i), '{}')
  FROM generate_series(1, greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0))) AS i
$$;

-- The statement that adds a set of per-minute deltas (a query yielding minute, job_type,
-- gap_buckets, gap_seconds_sum, claims_beyond_retention) to worker_gaps_hour and worker_gaps_day.
-- Built as text and EXECUTEd inside each trigger function, where the transition tables are visible.
CREATE FUNCTION onceboard_gaps_upsert(deltas text, unit text, target text)
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
  INSERT INTO %I AS g (%I, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention)
  SELECT tt.t, tt.job_type, coalesce(a.buckets, ''{}''), tt.gap_sum, tt.beyond
    FROM totals tt LEFT JOIN arrays a USING (t, job_type)
  ON CONFLICT (%I, job_type) DO UPDATE SET
    gap_buckets = onceboard_add_counts(g.gap_buckets, EXCLUDED.gap_buckets),
    gap_seconds_sum = g.gap_seconds_sum + EXCLUDED.gap_seconds_sum,
    claims_beyond_retention = g.claims_beyond_retention + EXCLUDED.claims_beyond_retention', unit, deltas, target, unit, unit)
$$;

-- Both tables from one delta query.
CREATE FUNCTION onceboard_gaps_apply(deltas text)
RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[onceboard_gaps_upsert(deltas, 'hour', 'worker_gaps_hour'), onceboard_gaps_upsert(deltas, 'day', 'worker_gaps_day')]
$$;

CREATE FUNCTION onceboard_gaps_hour_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stmt text;
BEGIN
  FOREACH stmt IN ARRAY onceboard_gaps_apply(
    'SELECT minute, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention FROM new_rows
      WHERE cardinality(gap_buckets) > 0 OR gap_seconds_sum <> 0 OR claims_beyond_retention <> 0') LOOP
    EXECUTE stmt;
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE FUNCTION onceboard_gaps_hour_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stmt text;
BEGIN
  -- Old and new rows are matched by the primary key (minute, job_type), which upserts never change.
  FOREACH stmt IN ARRAY onceboard_gaps_apply(
    'SELECT n.minute, n.job_type, onceboard_sub_counts(n.gap_buckets, o.gap_buckets) AS gap_buckets,
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

CREATE FUNCTION onceboard_gaps_hour_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  stmt text;
BEGIN
  FOREACH stmt IN ARRAY onceboard_gaps_apply(
    'SELECT minute, job_type, onceboard_sub_counts(''{}'', gap_buckets) AS gap_buckets,
            -gap_seconds_sum AS gap_seconds_sum, -claims_beyond_retention AS claims_beyond_retention
       FROM old_rows') LOOP
    EXECUTE stmt;
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE TRIGGER worker_stats_minute_gaps_insert AFTER INSERT ON worker_stats_minute
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION onceboard_gaps_hour_on_insert();
CREATE TRIGGER worker_stats_minute_gaps_update AFTER UPDATE ON worker_stats_minute
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION onceboard_gaps_hour_on_update();
CREATE TRIGGER worker_stats_minute_gaps_delete AFTER DELETE ON worker_stats_minute
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION onceboard_gaps_hour_on_delete();

-- Rows written before this migration.
INSERT INTO worker_gaps_hour (hour, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention)
SELECT hour, job_type, coalesce((SELECT array_agg(s ORDER BY i) FROM (
         SELECT u.i, sum(u.b)::bigint AS s
           FROM worker_stats_minute w2, unnest(w2.gap_buckets) WITH ORDINALITY AS u(b, i)
          WHERE date_trunc('hour', w2.minute, 'UTC') = h.hour AND w2.job_type = h.job_type
          GROUP BY u.i) x), '{}'),
       gap_sum, 0
  FROM (SELECT date_trunc('hour', minute, 'UTC') AS hour, job_type, sum(gap_seconds_sum) AS gap_sum
          FROM worker_stats_minute GROUP BY 1, 2) AS h;

INSERT INTO worker_gaps_day (day, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention)
SELECT d.day, d.job_type,
       coalesce((SELECT array_agg(s ORDER BY i) FROM (
         SELECT u.i, sum(u.b)::bigint AS s
           FROM worker_gaps_hour h2, unnest(h2.gap_buckets) WITH ORDINALITY AS u(b, i)
          WHERE date_trunc('day', h2.hour, 'UTC') = d.day AND h2.job_type = d.job_type
          GROUP BY u.i) x), '{}'),
       d.gap_sum, 0
  FROM (SELECT date_trunc('day', hour, 'UTC') AS day, job_type, sum(gap_seconds_sum) AS gap_sum
          FROM worker_gaps_hour GROUP BY 1, 2) AS d;
