-- Each start of a worker process, recorded by the worker itself when it registers (registerWorker),
-- under its name across restarts (the workerName option): PostgreSQL's 0022_worker_starts, same
-- columns and meanings. The console counts a worker's restarts from these rows. process_started_at is
-- the process's start time (UTC, to the second); a worker prunes its own rows older than a month when
-- it records a start.
CREATE TABLE IF NOT EXISTS onceboard.worker_starts (
  worker_name VARCHAR(255) NOT NULL,
  process_started_at DATETIME(3) NOT NULL,
  host VARCHAR(255) NOT NULL,
  pid INT NOT NULL,
  worker_id VARCHAR(255) NOT NULL,
  recorded_at DATETIME(3) NOT NULL,
  PRIMARY KEY (worker_name, process_started_at, host, pid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
