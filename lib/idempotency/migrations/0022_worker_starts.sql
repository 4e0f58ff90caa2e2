-- Each start of a worker process, recorded by the worker itself when it registers (registerWorker),
-- under its name across restarts (the workerName option; its /metrics names it in idem_worker_info).
-- The console counts a worker's restarts from these rows: a restart happens whether or not a page was
-- open to see it. process_started_at is the process's start time (what process_start_time_seconds
-- says); a worker prunes its own rows older than a month when it records a start.
CREATE TABLE onceboard.worker_starts (
  worker_name text NOT NULL,
  process_started_at timestamptz NOT NULL,
  host text NOT NULL,
  pid integer NOT NULL,
  worker_id text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT worker_starts_pkey PRIMARY KEY (worker_name, process_started_at, host, pid)
);
