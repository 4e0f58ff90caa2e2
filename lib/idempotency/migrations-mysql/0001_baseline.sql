-- The worker library's schema on MySQL 8 / MariaDB 10.6+, whole: what `migrate()` installs into
-- the database named by the `schema` option (default `onceboard`; MySQL's "schema" is a database).
-- Objects are named `onceboard.<name>`; migrate() rewrites that qualifier for another database, and
-- on MySQL (not MariaDB) the NO PAD binary collation's name (utf8mb4_nopad_bin → utf8mb4_0900_bin).
-- Never edit this file once released; add 0002_… instead. MySQL commits around every DDL statement,
-- so a migration is applied statement by statement and recorded when all of them succeeded: every
-- statement here must be safe to run again (IF NOT EXISTS, DROP … IF EXISTS before CREATE,
-- ON DUPLICATE KEY UPDATE), so that a run interrupted half-way is finished by the next.
-- Statements end with `;` at the end of a line, or with the DELIMITER in force (the mysql client's
-- convention, so `mysql onceboard < 0001_baseline.sql` applies this file too).
--
-- Layout (docs/worker-library.md, "On MySQL and MariaDB"; measured in docs/benchmarks.md): InnoDB
-- refuses a unique key that does not hold every column of the partitioning expression (error
-- 1503), so effects is one unpartitioned table whose primary key (tenant_id, key) is the claim's
-- uniqueness across all time; retention deletes its old rows in paced batches. The per-delivery
-- timeline, the volume that grows with every redelivery, is partitioned by day and dropped a
-- partition at a time. Column names and meanings are the PostgreSQL store's (prisma/schema.sql);
-- every instant is a DATETIME(3) in UTC (the library writes UTC_TIMESTAMP(3), never NOW(), so
-- the session time zone never matters); text that names something (tenant, key, owner, job type)
-- compares byte for byte with no trailing-space padding, as PostgreSQL's text does.

-- One row per effect per tenant: the claim, its lease and owner, the stored outcome (JSON text),
-- and the batched duplicate bookkeeping.
CREATE TABLE IF NOT EXISTS onceboard.effects (
  tenant_id VARCHAR(255) NOT NULL,
  `key` VARCHAR(255) NOT NULL,
  job_type VARCHAR(255) NOT NULL,
  status VARCHAR(16) NOT NULL,
  policy VARCHAR(16) NOT NULL,
  attempt INT NOT NULL DEFAULT 1,
  owner VARCHAR(255) NULL,
  lease_until DATETIME(3) NULL,
  first_message_id VARCHAR(1000) NULL,
  last_message_id VARCHAR(1000) NULL,
  request_hash VARCHAR(128) NULL,
  outcome LONGTEXT NULL,
  error TEXT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  completed_at DATETIME(3) NULL,
  duplicate_count INT NOT NULL DEFAULT 0,
  last_duplicate_at DATETIME(3) NULL,
  max_gap_seconds DOUBLE NULL,
  marked BOOLEAN NOT NULL DEFAULT FALSE,
  PRIMARY KEY (tenant_id, `key`),
  -- Retention deletes oldest first, in batches.
  KEY effects_created_at_idx (created_at),
  -- Stuck claims (in progress, lease expired) and the retention's live-lease guard.
  KEY effects_status_lease_until_idx (status, lease_until),
  -- The console's per-tenant reads in time order (PostgreSQL builds it on closed partitions only).
  KEY effects_tenant_created_at_idx (tenant_id, created_at),
  -- The delivery-gaps page's late duplicates (PostgreSQL's is partial: MySQL indexes the NULLs too).
  KEY effects_max_gap_seconds_idx (max_gap_seconds),
  CONSTRAINT effects_status_check CHECK (status IN ('in_progress', 'completed', 'failed', 'abandoned')),
  CONSTRAINT effects_policy_check CHECK (policy IN ('external', 'at_most_once', 'transactional', 'once')),
  CONSTRAINT effects_key_length CHECK (CHAR_LENGTH(`key`) BETWEEN 1 AND 255),
  CONSTRAINT effects_tenant_id_length CHECK (CHAR_LENGTH(tenant_id) BETWEEN 1 AND 255),
  CONSTRAINT effects_outcome_json CHECK (outcome IS NULL OR JSON_VALID(outcome))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- Every delivery's claim answer, one row each (the key page's timeline). Partitioned by day (the
-- retention settings' interval) and premade ahead by migrate() and maintain(); there is no
-- catch-all partition after the last, so a row past the premade range fails loudly (1526) and is
-- dropped and counted by the worker (idem_timeline_dropped_total), as on PostgreSQL. p_start only
-- exists because a partitioned table needs one partition at creation; it holds nothing.
-- (chunk_id, seq) names the row within the worker's flush: a flush retried after a lost reply
-- writes each delivery once.
CREATE TABLE IF NOT EXISTS onceboard.delivery_timeline (
  delivered_at DATETIME(3) NOT NULL,
  chunk_id CHAR(36) NOT NULL,
  seq INT NOT NULL,
  tenant_id VARCHAR(255) NOT NULL,
  `key` VARCHAR(255) NOT NULL,
  job_type VARCHAR(255) NOT NULL,
  answer VARCHAR(16) NOT NULL,
  message_id VARCHAR(1000) NULL,
  delivery_attempt INT NULL,
  effect_attempt INT NOT NULL,
  claim_ms FLOAT NOT NULL,
  effect_created_at DATETIME(3) NULL,
  worker_id VARCHAR(255) NOT NULL,
  marked BOOLEAN NOT NULL DEFAULT FALSE,
  PRIMARY KEY (delivered_at, chunk_id, seq),
  KEY delivery_timeline_key_idx (tenant_id, `key`, delivered_at),
  CONSTRAINT delivery_timeline_answer_check CHECK (answer IN ('claimed', 'duplicate', 'waited', 'in_flight', 'takeover', 'retry',
    'abandoned', 'key_reuse', 'beyond_retention'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
PARTITION BY RANGE COLUMNS (delivered_at) (PARTITION p_start VALUES LESS THAN ('2000-01-01 00:00:00'));

-- One row per uncaught unique violation from a handler's own writes (the console's Violations
-- page). seq orders them for keyset pages.
CREATE TABLE IF NOT EXISTS onceboard.uncaught_violation_keys (
  id CHAR(36) NOT NULL,
  seq BIGINT NOT NULL AUTO_INCREMENT,
  occurred_at DATETIME(3) NOT NULL,
  tenant_id VARCHAR(255) NOT NULL,
  job_type VARCHAR(255) NOT NULL,
  constraint_name VARCHAR(255) NOT NULL,
  `key` VARCHAR(255) NOT NULL,
  message_id VARCHAR(1000) NULL,
  message TEXT NULL,
  worker_id VARCHAR(255) NULL,
  marked BOOLEAN NOT NULL DEFAULT FALSE,
  PRIMARY KEY (id),
  UNIQUE KEY uncaught_violation_keys_seq_key (seq),
  KEY uncaught_violation_keys_occurred_seq_idx (occurred_at, seq),
  KEY uncaught_violation_keys_tenant_occurred_seq_idx (tenant_id, occurred_at, seq),
  KEY uncaught_violation_keys_tenant_key_idx (tenant_id, `key`, occurred_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- Per-minute rollups, flushed by every worker: each upsert adds its counts. gap_buckets and
-- buckets are JSON arrays of counts, element i the bucket of GAP_BUCKET_BOUNDS /
-- CLAIM_DURATION_BUCKETS i (then +Inf), as PostgreSQL's bigint[]. `marked` is part of each key, so
-- a marked workload's rows are deleted exactly. PostgreSQL keeps coarser levels with triggers; here
-- the flush writes the hour level beside the minute (no trigger, no stored function: both need
-- SUPER or log_bin_trust_function_creators where binary logging is on), and the 10-minute and day
-- levels are sums of these read at query time.
CREATE TABLE IF NOT EXISTS onceboard.worker_stats_minute (
  minute DATETIME NOT NULL,
  job_type VARCHAR(255) NOT NULL,
  marked BOOLEAN NOT NULL DEFAULT FALSE,
  claims BIGINT NOT NULL DEFAULT 0,
  suppressed BIGINT NOT NULL DEFAULT 0,
  in_flight BIGINT NOT NULL DEFAULT 0,
  takeovers BIGINT NOT NULL DEFAULT 0,
  abandoned BIGINT NOT NULL DEFAULT 0,
  failed BIGINT NOT NULL DEFAULT 0,
  key_reuse BIGINT NOT NULL DEFAULT 0,
  uncaught_violations BIGINT NOT NULL DEFAULT 0,
  deliveries BIGINT NOT NULL DEFAULT 0,
  redeliveries BIGINT NOT NULL DEFAULT 0,
  message_id_keys BIGINT NOT NULL DEFAULT 0,
  claim_seconds_sum DOUBLE NOT NULL DEFAULT 0,
  gap_buckets VARCHAR(1000) NOT NULL DEFAULT '[]',
  gap_seconds_sum DOUBLE NOT NULL DEFAULT 0,
  claims_beyond_retention BIGINT NOT NULL DEFAULT 0,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (minute, job_type, marked),
  KEY worker_stats_minute_job_type_minute_idx (job_type, minute)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS onceboard.worker_stats_hour (
  hour DATETIME NOT NULL,
  job_type VARCHAR(255) NOT NULL,
  marked BOOLEAN NOT NULL DEFAULT FALSE,
  claims BIGINT NOT NULL DEFAULT 0,
  suppressed BIGINT NOT NULL DEFAULT 0,
  in_flight BIGINT NOT NULL DEFAULT 0,
  takeovers BIGINT NOT NULL DEFAULT 0,
  abandoned BIGINT NOT NULL DEFAULT 0,
  failed BIGINT NOT NULL DEFAULT 0,
  key_reuse BIGINT NOT NULL DEFAULT 0,
  uncaught_violations BIGINT NOT NULL DEFAULT 0,
  deliveries BIGINT NOT NULL DEFAULT 0,
  redeliveries BIGINT NOT NULL DEFAULT 0,
  message_id_keys BIGINT NOT NULL DEFAULT 0,
  claim_seconds_sum DOUBLE NOT NULL DEFAULT 0,
  gap_buckets VARCHAR(1000) NOT NULL DEFAULT '[]',
  gap_seconds_sum DOUBLE NOT NULL DEFAULT 0,
  claims_beyond_retention BIGINT NOT NULL DEFAULT 0,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (hour, job_type, marked),
  KEY worker_stats_hour_job_type_hour_idx (job_type, hour)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS onceboard.claim_latency_minute (
  minute DATETIME NOT NULL,
  job_type VARCHAR(255) NOT NULL,
  marked BOOLEAN NOT NULL DEFAULT FALSE,
  buckets VARCHAR(1000) NOT NULL DEFAULT '[]',
  PRIMARY KEY (minute, job_type, marked)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS onceboard.claim_latency_hour (
  hour DATETIME NOT NULL,
  job_type VARCHAR(255) NOT NULL,
  marked BOOLEAN NOT NULL DEFAULT FALSE,
  buckets VARCHAR(1000) NOT NULL DEFAULT '[]',
  PRIMARY KEY (hour, job_type, marked)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE IF NOT EXISTS onceboard.uncaught_violations_minute (
  minute DATETIME NOT NULL,
  job_type VARCHAR(255) NOT NULL,
  constraint_name VARCHAR(255) NOT NULL,
  marked BOOLEAN NOT NULL DEFAULT FALSE,
  count BIGINT NOT NULL DEFAULT 0,
  last_tenant_id VARCHAR(255) NULL,
  last_key VARCHAR(255) NULL,
  last_message_id VARCHAR(1000) NULL,
  PRIMARY KEY (minute, job_type, constraint_name, marked)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- Per-tenant hourly counters of the rare events only (suppressions, uncaught violations).
CREATE TABLE IF NOT EXISTS onceboard.tenant_suppressions_hour (
  hour DATETIME NOT NULL,
  tenant_id VARCHAR(255) NOT NULL,
  job_type VARCHAR(255) NOT NULL,
  marked BOOLEAN NOT NULL DEFAULT FALSE,
  count BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (hour, tenant_id, job_type, marked),
  KEY tenant_suppressions_hour_tenant_idx (tenant_id, hour)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- The primary key is at InnoDB's 3072-byte limit (three 255-character utf8mb4 columns).
CREATE TABLE IF NOT EXISTS onceboard.tenant_violations_hour (
  hour DATETIME NOT NULL,
  tenant_id VARCHAR(255) NOT NULL,
  job_type VARCHAR(255) NOT NULL,
  constraint_name VARCHAR(255) NOT NULL,
  marked BOOLEAN NOT NULL DEFAULT FALSE,
  count BIGINT NOT NULL DEFAULT 0,
  last_key VARCHAR(255) NOT NULL,
  last_seen DATETIME(3) NOT NULL,
  PRIMARY KEY (hour, tenant_id, job_type, constraint_name, marked),
  KEY tenant_violations_hour_tenant_idx (tenant_id, hour)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- The one truth for retention (the console's Retention page writes it; workers and maintain() read it).
CREATE TABLE IF NOT EXISTS onceboard.retention_settings (
  id SMALLINT NOT NULL DEFAULT 1,
  retention_days INT NOT NULL DEFAULT 7,
  max_retry_window_days INT NOT NULL DEFAULT 3,
  partition_interval VARCHAR(8) NOT NULL DEFAULT 'day',
  premake_count INT NOT NULL DEFAULT 7,
  updated_at DATETIME(3) NOT NULL DEFAULT '2000-01-01 00:00:00',
  updated_by VARCHAR(255) NULL,
  PRIMARY KEY (id),
  CONSTRAINT retention_settings_id_check CHECK (id = 1),
  CONSTRAINT retention_covers_retry_window CHECK (retention_days >= max_retry_window_days),
  CONSTRAINT retention_settings_retention_days_check CHECK (retention_days >= 1),
  CONSTRAINT retention_settings_max_retry_window_days_check CHECK (max_retry_window_days >= 0),
  CONSTRAINT retention_settings_partition_interval_check CHECK (partition_interval IN ('hour', 'day', 'week')),
  CONSTRAINT retention_settings_premake_count_check CHECK (premake_count BETWEEN 1 AND 1000)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

INSERT INTO onceboard.retention_settings (id) VALUES (1) ON DUPLICATE KEY UPDATE id = id;

-- Each worker's declared maxRetryWindow, alive while its heartbeat is younger than its TTL.
CREATE TABLE IF NOT EXISTS onceboard.worker_registrations (
  worker_id VARCHAR(255) NOT NULL,
  max_retry_window_seconds DOUBLE NOT NULL,
  host VARCHAR(255) NULL,
  pid INT NULL,
  started_at DATETIME(3) NOT NULL,
  heartbeat_at DATETIME(3) NOT NULL,
  ttl_seconds INT NOT NULL DEFAULT 120,
  PRIMARY KEY (worker_id),
  KEY worker_registrations_heartbeat_at_idx (heartbeat_at),
  CONSTRAINT worker_registrations_max_retry_window_seconds_check CHECK (max_retry_window_seconds >= 0),
  CONSTRAINT worker_registrations_ttl_seconds_check CHECK (ttl_seconds > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- One row per maintenance run (maintain()), its operations as a JSON array.
CREATE TABLE IF NOT EXISTS onceboard.maintenance_runs (
  id BIGINT NOT NULL AUTO_INCREMENT,
  runner VARCHAR(255) NOT NULL,
  `trigger` VARCHAR(64) NOT NULL,
  started_at DATETIME(3) NOT NULL,
  finished_at DATETIME(3) NULL,
  result VARCHAR(16) NOT NULL DEFAULT 'running',
  operations LONGTEXT NOT NULL,
  error TEXT NULL,
  PRIMARY KEY (id),
  KEY maintenance_runs_started_at_idx (started_at),
  CONSTRAINT maintenance_runs_result_check CHECK (result IN ('running', 'success', 'failed')),
  CONSTRAINT maintenance_runs_operations_json CHECK (JSON_VALID(operations))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

DELIMITER $$

-- One claim's decision (the claim contract, docs/worker-library.md), on the caller's transaction:
-- onceboard_claim and onceboard_claim_batch open and commit it when the library owns it. In order:
-- 1. A completed or abandoned row never changes again (only the batched duplicate bookkeeping
--    touches it, never its status, outcome or request hash): in the library's own READ COMMITTED
--    transaction (p_settled_read) it is found by a plain read and answered at once, with no lock and
--    nothing written. Not in a caller's transaction: at READ UNCOMMITTED a plain read would see a
--    completion another transaction then rolls back, and at REPEATABLE READ it would read an old
--    snapshot; the locking read below sees the latest committed row at any level.
-- 2. INSERT … ON DUPLICATE KEY UPDATE inserts this call's claim or, when the key exists, takes the
--    row's exclusive lock and changes nothing: the per-key mutex, held to the commit.
-- 3. A locking read returns the row's latest committed version whatever the isolation level, and
--    what to answer is decided from it: whether the row is this call's is told by its owner token
--    (and its creation instant), never by the affected-row count, which CLIENT_FOUND_ROWS changes.
-- 4. A takeover (expired lease, failed attempt) or an at-most-once abandon is an UPDATE guarded by
--    the status and attempt just read, and read back again under the same lock.
-- Every decision uses the clock read once the row's lock is held (v_ts), not the call's start: a
-- claim that waited behind a holder (seconds, while a rolled-back holder's waiters sort out their
-- deadlock) must neither start its lease in the past nor judge a lease by a stale now. The row a call
-- inserts carries its start (v_start) until then, and is moved to v_ts when the two differ.
-- When the key is unknown and the delivery is older than the retention (p_require_existing),
-- nothing is inserted: the row may have been pruned, so "not found" cannot prove it never ran.
DROP PROCEDURE IF EXISTS onceboard.onceboard_claim_core $$
CREATE PROCEDURE onceboard.onceboard_claim_core(
  IN p_tenant VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_job_type VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_policy VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_owner VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_message_id VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_request_hash VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_lease_ms INT,
  IN p_require_existing BOOLEAN,
  IN p_marked BOOLEAN,
  IN p_settled_read BOOLEAN,
  OUT o_result VARCHAR(32),
  OUT o_status VARCHAR(16),
  OUT o_attempt INT,
  OUT o_owner VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  OUT o_policy VARCHAR(16),
  OUT o_created_at DATETIME(3),
  OUT o_lease_until DATETIME(3),
  OUT o_outcome LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  OUT o_error TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  OUT o_gap_seconds DOUBLE,
  OUT o_duplicate_count INT,
  OUT o_first_message_id VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  OUT o_db_now DATETIME(3))
claim: BEGIN
  DECLARE v_start DATETIME(3) DEFAULT UTC_TIMESTAMP(3);
  DECLARE v_ts DATETIME(3);
  DECLARE v_lease DATETIME(3);
  DECLARE v_found BOOLEAN DEFAULT TRUE;
  DECLARE v_hash VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE v_taken VARCHAR(32);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = FALSE;

  SET o_db_now = v_start, o_result = NULL, o_gap_seconds = NULL;

  -- 1. Settled: answered without a lock.
  IF p_settled_read THEN
    SELECT status, attempt, owner, policy, created_at, lease_until, outcome, error, duplicate_count, first_message_id, request_hash
      INTO o_status, o_attempt, o_owner, o_policy, o_created_at, o_lease_until, o_outcome, o_error, o_duplicate_count,
           o_first_message_id, v_hash
      FROM onceboard.effects
     WHERE tenant_id = p_tenant AND `key` = p_key AND status IN ('completed', 'abandoned');
    IF v_found THEN
      SET o_gap_seconds = TIMESTAMPDIFF(MICROSECOND, o_created_at, v_start) / 1000000;
      SET o_result = IF(p_request_hash IS NOT NULL AND v_hash IS NOT NULL AND v_hash <> p_request_hash, 'key_reuse', 'duplicate');
      LEAVE claim;
    END IF;
    SET v_found = TRUE;
  END IF;

  -- 2. Insert this claim, or lock the row that holds the key.
  IF NOT p_require_existing THEN
    INSERT INTO onceboard.effects (tenant_id, `key`, job_type, status, policy, attempt, owner, lease_until, first_message_id,
                                   last_message_id, request_hash, created_at, updated_at, marked)
    VALUES (p_tenant, p_key, p_job_type, 'in_progress', p_policy, 1, p_owner,
            v_start + INTERVAL p_lease_ms * 1000 MICROSECOND, p_message_id, p_message_id, p_request_hash, v_start, v_start, p_marked)
    ON DUPLICATE KEY UPDATE tenant_id = tenant_id;
  END IF;

  -- 3. The row as it is now, locked.
  SELECT status, attempt, owner, policy, created_at, lease_until, outcome, error, duplicate_count, first_message_id, request_hash
    INTO o_status, o_attempt, o_owner, o_policy, o_created_at, o_lease_until, o_outcome, o_error, o_duplicate_count,
         o_first_message_id, v_hash
    FROM onceboard.effects
   WHERE tenant_id = p_tenant AND `key` = p_key
     FOR UPDATE;
  SET v_ts = UTC_TIMESTAMP(3);
  SET v_lease = v_ts + INTERVAL p_lease_ms * 1000 MICROSECOND;
  SET o_db_now = v_ts;
  IF NOT v_found THEN
    SET o_result = 'retention_expired', o_status = NULL, o_attempt = NULL, o_owner = NULL, o_policy = NULL,
        o_created_at = NULL, o_lease_until = NULL, o_outcome = NULL, o_error = NULL, o_duplicate_count = NULL,
        o_first_message_id = NULL;
    LEAVE claim;
  END IF;
  -- The row this call inserted: its owner token and its creation instant are this call's.
  IF o_owner = p_owner AND o_created_at = v_start AND o_attempt = 1 AND o_status = 'in_progress' THEN
    IF v_ts <> v_start THEN
      UPDATE onceboard.effects SET created_at = v_ts, updated_at = v_ts, lease_until = v_lease
       WHERE tenant_id = p_tenant AND `key` = p_key;
      SET o_created_at = v_ts, o_lease_until = v_lease;
    END IF;
    SET o_result = 'claimed';
    LEAVE claim;
  END IF;

  SET o_gap_seconds = TIMESTAMPDIFF(MICROSECOND, o_created_at, v_ts) / 1000000;
  IF p_request_hash IS NOT NULL AND v_hash IS NOT NULL AND v_hash <> p_request_hash THEN
    SET o_result = 'key_reuse';
    LEAVE claim;
  END IF;
  IF o_status IN ('completed', 'abandoned') THEN
    SET o_result = 'duplicate';
    LEAVE claim;
  END IF;
  IF o_status = 'in_progress' AND o_owner = p_owner THEN
    -- Our own claim, seen again because the library retried a claim whose reply was lost.
    SET o_result = 'claimed';
    LEAVE claim;
  END IF;
  IF o_status = 'in_progress' AND o_lease_until > v_ts THEN
    SET o_result = 'in_flight';
    LEAVE claim;
  END IF;

  -- 4. Exactly one claimer, the one holding the row's lock, takes it over. Assignments apply left
  -- to right, so error reads attempt and owner before they change.
  IF o_status = 'in_progress' AND o_policy = 'at_most_once' THEN
    -- A worker died between claim and completion of an at-most-once step: it may or may not have
    -- sent. By design it is never sent again; the claim is marked abandoned.
    UPDATE onceboard.effects
       SET error = CONCAT('abandoned: lease of attempt ', attempt, ' (', COALESCE(owner, '?'), ') expired'),
           status = 'abandoned', attempt = attempt + 1, owner = p_owner, lease_until = NULL, completed_at = v_ts,
           updated_at = v_ts, last_message_id = COALESCE(p_message_id, last_message_id)
     WHERE tenant_id = p_tenant AND `key` = p_key AND status = 'in_progress' AND attempt = o_attempt;
    SET v_taken = 'abandoned';
  ELSE
    UPDATE onceboard.effects
       SET status = 'in_progress', attempt = attempt + 1, owner = p_owner, lease_until = v_lease, updated_at = v_ts,
           error = NULL, last_message_id = COALESCE(p_message_id, last_message_id)
     WHERE tenant_id = p_tenant AND `key` = p_key AND status = o_status AND attempt = o_attempt;
    SET v_taken = IF(o_status = 'failed', 'retry', 'takeover');
  END IF;
  SELECT status, attempt, owner, lease_until, error
    INTO o_status, o_attempt, o_owner, o_lease_until, o_error
    FROM onceboard.effects
   WHERE tenant_id = p_tenant AND `key` = p_key
     FOR UPDATE;
  IF NOT v_found OR o_owner IS NULL OR o_owner <> p_owner THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'onceboard_claim: the row changed under its lock during a takeover';
  END IF;
  SET o_result = v_taken;
END claim $$

-- One claim, one round trip: the decision of onceboard_claim_core in a READ COMMITTED transaction
-- of its own (p_own_tx, the library's autocommit pool) or in the caller's (a transactional step).
-- The row lock is waited for at most p_lock_timeout_ms, rounded up to InnoDB's whole seconds
-- (innodb_lock_wait_timeout); the wait that ran out is error 1205, which the library answers as
-- in flight. Any error rolls the own transaction back and is raised again as it came (1213 on a
-- deadlock: the library retries it with jitter).
DROP PROCEDURE IF EXISTS onceboard.onceboard_claim $$
CREATE PROCEDURE onceboard.onceboard_claim(
  IN p_tenant VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_job_type VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_policy VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_owner VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_message_id VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_request_hash VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_lease_ms INT,
  IN p_lock_timeout_ms INT,
  IN p_require_existing BOOLEAN,
  IN p_marked BOOLEAN,
  IN p_own_tx BOOLEAN)
BEGIN
  DECLARE v_saved_wait BIGINT DEFAULT @@SESSION.innodb_lock_wait_timeout;
  DECLARE o_result VARCHAR(32);
  DECLARE o_status VARCHAR(16);
  DECLARE o_attempt INT;
  DECLARE o_owner VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE o_policy VARCHAR(16);
  DECLARE o_created_at DATETIME(3);
  DECLARE o_lease_until DATETIME(3);
  DECLARE o_outcome LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE o_error TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE o_gap_seconds DOUBLE;
  DECLARE o_duplicate_count INT;
  DECLARE o_first_message_id VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE o_db_now DATETIME(3);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    IF p_own_tx THEN ROLLBACK; END IF;
    SET SESSION innodb_lock_wait_timeout = v_saved_wait;
    RESIGNAL;
  END;

  SET SESSION innodb_lock_wait_timeout = GREATEST(1, CEIL(p_lock_timeout_ms / 1000));
  IF p_own_tx THEN
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
  END IF;
  CALL onceboard.onceboard_claim_core(p_tenant, p_key, p_job_type, p_policy, p_owner, p_message_id, p_request_hash, p_lease_ms,
    p_require_existing, p_marked, p_own_tx, o_result, o_status, o_attempt, o_owner, o_policy, o_created_at, o_lease_until, o_outcome,
    o_error, o_gap_seconds, o_duplicate_count, o_first_message_id, o_db_now);
  IF p_own_tx THEN COMMIT; END IF;
  SET SESSION innodb_lock_wait_timeout = v_saved_wait;
  -- Instants as text ('YYYY-MM-DD hh:mm:ss.fff', UTC): the driver's time-zone setting never applies.
  SELECT o_result AS result, o_status AS status, o_attempt AS attempt, o_owner AS owner, o_policy AS policy,
         CAST(o_created_at AS CHAR) AS created_at, CAST(o_lease_until AS CHAR) AS lease_until, o_outcome AS outcome,
         o_error AS error, o_gap_seconds AS gap_seconds, o_duplicate_count AS duplicate_count,
         o_first_message_id AS first_message_id, CAST(o_db_now AS CHAR) AS db_now;
END $$

-- Many claims of one job type, policy, lease and marking in one round trip and one commit, each
-- answered as onceboard_claim would answer it alone. The usual batch is all fresh keys, or all keys
-- done before (a redelivery), so those are decided set-wise:
-- 1. One INSERT … SELECT … ON DUPLICATE KEY UPDATE inserts every fresh key and locks every existing
--    row, in (tenant, key) order, so two batches that share keys lock them in one order and never
--    deadlock each other. Keys that must already exist (older than the retention) are not inserted.
-- 2. The rows this statement inserted move to the clock read once every lock is held, when the two
--    differ (the statement waited behind a holder), as onceboard_claim_core's do.
-- 3. Keys a single statement cannot decide (an expired claim or a failed attempt to take over or
--    abandon, a key that must exist, so is looked up under its lock) go through
--    onceboard_claim_core one by one, in key order, in this transaction.
-- 4. Every other key is answered from its locked row by one SELECT, exactly as the core answers
--    it: this call's fresh row is claimed, a settled row a duplicate (or key reuse), an in-progress
--    row of another owner with a live lease in flight (a key twice in one batch: its second copy).
-- Whose row is whose is told by the owner token and the creation instant read back, never by an
-- affected-row count. p_claims: a JSON array of {t, k, o, m, h, r} (tenant, key, owner, message
-- id, request hash, require existing). Answers: two JSON arrays of objects with `ord`, the 1-based
-- position in p_claims: `answers` (step 4) and `decided` (step 3).
DROP PROCEDURE IF EXISTS onceboard.onceboard_claim_batch $$
CREATE PROCEDURE onceboard.onceboard_claim_batch(
  IN p_claims LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_job_type VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_policy VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_lease_ms INT,
  IN p_lock_timeout_ms INT,
  IN p_marked BOOLEAN,
  IN p_own_tx BOOLEAN)
BEGIN
  DECLARE v_saved_wait BIGINT DEFAULT @@SESSION.innodb_lock_wait_timeout;
  DECLARE v_start DATETIME(3) DEFAULT UTC_TIMESTAMP(3);
  DECLARE v_ts DATETIME(3);
  DECLARE v_done BOOLEAN DEFAULT FALSE;
  DECLARE v_complex LONGTEXT;
  DECLARE v_answers LONGTEXT;
  DECLARE v_decided LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin DEFAULT '';
  DECLARE v_ord INT;
  DECLARE v_tenant VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE v_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE v_owner VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE v_message_id VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE v_request_hash VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE v_require_existing BOOLEAN;
  DECLARE o_result VARCHAR(32);
  DECLARE o_status VARCHAR(16);
  DECLARE o_attempt INT;
  DECLARE o_owner VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE o_policy VARCHAR(16);
  DECLARE o_created_at DATETIME(3);
  DECLARE o_lease_until DATETIME(3);
  DECLARE o_outcome LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE o_error TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE o_gap_seconds DOUBLE;
  DECLARE o_duplicate_count INT;
  DECLARE o_first_message_id VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE o_db_now DATETIME(3);
  DECLARE complex CURSOR FOR
    SELECT j.ord, j.t, j.k, j.o, j.m, j.h, j.r
      FROM JSON_TABLE(p_claims, '$[*]' COLUMNS (
             ord FOR ORDINALITY,
             t VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.t',
             k VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.k',
             o VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.o',
             m VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.m',
             h VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.h',
             r BOOLEAN PATH '$.r')) AS j
      JOIN JSON_TABLE(v_complex, '$[*]' COLUMNS (ord INT PATH '$')) AS c ON c.ord = j.ord
     ORDER BY j.t, j.k, j.ord;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    IF p_own_tx THEN ROLLBACK; END IF;
    SET SESSION innodb_lock_wait_timeout = v_saved_wait;
    RESIGNAL;
  END;

  SET SESSION innodb_lock_wait_timeout = GREATEST(1, CEIL(p_lock_timeout_ms / 1000));
  IF p_own_tx THEN
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
  END IF;

  -- 1. Insert the fresh keys, lock the rows of the others.
  INSERT INTO onceboard.effects (tenant_id, `key`, job_type, status, policy, attempt, owner, lease_until, first_message_id,
                                 last_message_id, request_hash, created_at, updated_at, marked)
  SELECT j.t, j.k, p_job_type, 'in_progress', p_policy, 1, j.o, v_start + INTERVAL p_lease_ms * 1000 MICROSECOND, j.m, j.m, j.h,
         v_start, v_start, p_marked
    FROM JSON_TABLE(p_claims, '$[*]' COLUMNS (
             ord FOR ORDINALITY,
             t VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.t',
             k VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.k',
             o VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.o',
             m VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.m',
             h VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.h',
             r BOOLEAN PATH '$.r')) AS j
   WHERE NOT COALESCE(j.r, FALSE)
   ORDER BY j.t, j.k, j.ord
  ON DUPLICATE KEY UPDATE tenant_id = onceboard.effects.tenant_id;

  -- 2. The clock once the locks are held; this batch's rows moved to it when they waited.
  SET v_ts = UTC_TIMESTAMP(3);
  IF v_ts <> v_start THEN
    UPDATE onceboard.effects e
      JOIN JSON_TABLE(p_claims, '$[*]' COLUMNS (
             ord FOR ORDINALITY,
             t VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.t',
             k VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.k',
             o VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.o',
             m VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.m',
             h VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.h',
             r BOOLEAN PATH '$.r')) AS j ON e.tenant_id = j.t AND e.`key` = j.k
       SET e.created_at = v_ts, e.updated_at = v_ts, e.lease_until = v_ts + INTERVAL p_lease_ms * 1000 MICROSECOND
     WHERE e.owner = j.o AND e.created_at = v_start AND e.attempt = 1 AND e.status = 'in_progress';
  END IF;

  -- 3. The keys the core decides, one by one.
  SELECT COALESCE(JSON_ARRAYAGG(j.ord), '[]') INTO v_complex
    FROM JSON_TABLE(p_claims, '$[*]' COLUMNS (
             ord FOR ORDINALITY,
             t VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.t',
             k VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.k',
             o VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.o',
             m VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.m',
             h VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.h',
             r BOOLEAN PATH '$.r')) AS j
    LEFT JOIN onceboard.effects e ON e.tenant_id = j.t AND e.`key` = j.k
   WHERE COALESCE(j.r, FALSE)
      OR e.status = 'failed'
      OR (e.status = 'in_progress' AND e.lease_until <= v_ts AND e.owner <> j.o);
  IF v_complex <> '[]' THEN
    OPEN complex;
    each_claim: LOOP
      SET v_done = FALSE;
      FETCH complex INTO v_ord, v_tenant, v_key, v_owner, v_message_id, v_request_hash, v_require_existing;
      IF v_done THEN LEAVE each_claim; END IF;
      CALL onceboard.onceboard_claim_core(v_tenant, v_key, p_job_type, p_policy, v_owner, v_message_id, v_request_hash, p_lease_ms,
        COALESCE(v_require_existing, FALSE), p_marked, FALSE, o_result, o_status, o_attempt, o_owner, o_policy, o_created_at,
        o_lease_until, o_outcome, o_error, o_gap_seconds, o_duplicate_count, o_first_message_id, o_db_now);
      -- CONCAT, not JSON_ARRAY_APPEND: appending text does not parse the array again per key.
      SET v_decided = CONCAT(v_decided, IF(v_decided = '', '', ','), JSON_OBJECT(
        'ord', v_ord, 'result', o_result, 'status', o_status, 'attempt', o_attempt, 'owner', o_owner, 'policy', o_policy,
        'created_at', CAST(o_created_at AS CHAR), 'lease_until', CAST(o_lease_until AS CHAR), 'outcome', o_outcome,
        'error', o_error, 'gap_seconds', o_gap_seconds, 'duplicate_count', o_duplicate_count,
        'first_message_id', o_first_message_id, 'db_now', CAST(o_db_now AS CHAR)));
    END LOOP;
    CLOSE complex;
  END IF;

  -- 4. Every other key, from its locked row.
  SELECT COALESCE(JSON_ARRAYAGG(JSON_OBJECT(
           'ord', a.ord, 'result', a.result, 'status', a.status, 'attempt', a.attempt, 'owner', a.owner, 'policy', a.policy,
           'created_at', CAST(a.created_at AS CHAR), 'lease_until', CAST(a.lease_until AS CHAR), 'outcome', a.outcome,
           'error', a.error, 'gap_seconds', IF(a.result = 'claimed' AND a.fresh, NULL, a.gap_seconds),
           'duplicate_count', a.duplicate_count, 'first_message_id', a.first_message_id, 'db_now', CAST(v_ts AS CHAR))), '[]')
    INTO v_answers
    FROM (
      SELECT j.ord, e.status, e.attempt, e.owner, e.policy, e.created_at, e.lease_until, e.outcome, e.error,
             e.duplicate_count, e.first_message_id,
             TIMESTAMPDIFF(MICROSECOND, e.created_at, v_ts) / 1000000 AS gap_seconds,
             e.owner = j.o AND e.created_at = v_ts AND e.attempt = 1 AS fresh,
             CASE
               WHEN e.owner = j.o AND e.created_at = v_ts AND e.attempt = 1 AND e.status = 'in_progress' THEN 'claimed'
               WHEN j.h IS NOT NULL AND e.request_hash IS NOT NULL AND e.request_hash <> j.h THEN 'key_reuse'
               WHEN e.status IN ('completed', 'abandoned') THEN 'duplicate'
               WHEN e.status = 'in_progress' AND e.owner = j.o THEN 'claimed'
               WHEN e.status = 'in_progress' AND e.lease_until > v_ts THEN 'in_flight'
             END AS result
        FROM JSON_TABLE(p_claims, '$[*]' COLUMNS (
             ord FOR ORDINALITY,
             t VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.t',
             k VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.k',
             o VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.o',
             m VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.m',
             h VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.h',
             r BOOLEAN PATH '$.r')) AS j
        JOIN onceboard.effects e ON e.tenant_id = j.t AND e.`key` = j.k
       WHERE j.ord NOT IN (SELECT c.ord FROM JSON_TABLE(v_complex, '$[*]' COLUMNS (ord INT PATH '$')) AS c)
    ) AS a;

  IF p_own_tx THEN COMMIT; END IF;
  SET SESSION innodb_lock_wait_timeout = v_saved_wait;
  SELECT v_answers AS answers, CONCAT('[', v_decided, ']') AS decided;
END $$

-- Completions, failures and abandons, one or many in one round trip and one commit (p_status:
-- 'completed', 'failed' or 'abandoned'). Each row is named by (tenant, key, created_at) and guarded
-- by (owner, attempt): a worker whose claim was taken over updates nothing. Which claims were still
-- ours is then read back, by owner token, attempt and the status just written, in the same
-- transaction: never by the affected-row count. p_items: a JSON array of {t, k, c, o, a, v, e}
-- (tenant, key, created_at, owner, attempt, outcome as JSON text, error). Answers: the 1-based
-- positions in p_items of the claims still ours, as one JSON array.
-- A completion re-sent after a lost reply reports success, but a completed row keeps its outcome,
-- error and completed_at: a stored outcome is never replaced (duplicates already returned it).
-- Assignments apply left to right: each IF reads the status before the last assignment sets it.
DROP PROCEDURE IF EXISTS onceboard.onceboard_finish $$
CREATE PROCEDURE onceboard.onceboard_finish(
  IN p_status VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_items LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_own_tx BOOLEAN)
BEGIN
  DECLARE v_ts DATETIME(3) DEFAULT UTC_TIMESTAMP(3);
  DECLARE v_ours LONGTEXT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    IF p_own_tx THEN ROLLBACK; END IF;
    RESIGNAL;
  END;
  IF p_own_tx THEN
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
  END IF;
  IF p_status = 'completed' THEN
    UPDATE onceboard.effects e
      JOIN JSON_TABLE(p_items, '$[*]' COLUMNS (
             t VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.t',
             k VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.k',
             c DATETIME(3) PATH '$.c',
             o VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.o',
             a INT PATH '$.a',
             v LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.v',
             x TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.e')) AS j
        ON e.tenant_id = j.t AND e.`key` = j.k AND e.created_at = j.c AND e.owner = j.o AND e.attempt = j.a
       SET e.outcome = IF(e.status = 'completed', e.outcome, j.v),
           e.error = IF(e.status = 'completed', e.error, j.x),
           e.completed_at = IF(e.status = 'completed', e.completed_at, v_ts),
           e.status = 'completed', e.lease_until = NULL, e.updated_at = v_ts
     WHERE e.status IN ('in_progress', 'completed');
  ELSE
    UPDATE onceboard.effects e
      JOIN JSON_TABLE(p_items, '$[*]' COLUMNS (
             t VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.t',
             k VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.k',
             c DATETIME(3) PATH '$.c',
             o VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.o',
             a INT PATH '$.a',
             x TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.e')) AS j
        ON e.tenant_id = j.t AND e.`key` = j.k AND e.created_at = j.c AND e.owner = j.o AND e.attempt = j.a
       SET e.status = p_status, e.error = j.x, e.lease_until = NULL, e.updated_at = v_ts
     WHERE e.status IN ('in_progress', p_status);
  END IF;
  SELECT COALESCE(JSON_ARRAYAGG(j.ord), '[]') INTO v_ours
    FROM JSON_TABLE(p_items, '$[*]' COLUMNS (
           ord FOR ORDINALITY,
           t VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.t',
           k VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.k',
           c DATETIME(3) PATH '$.c',
           o VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.o',
           a INT PATH '$.a')) AS j
    JOIN onceboard.effects e
      ON e.tenant_id = j.t AND e.`key` = j.k AND e.created_at = j.c AND e.owner = j.o AND e.attempt = j.a
   WHERE e.status = p_status;
  IF p_own_tx THEN COMMIT; END IF;
  SELECT v_ours AS ours;
END $$

-- Pushes an in-progress claim's lease to now + p_lease_ms and reads it back by the claim's owner
-- token and attempt: the new end, or no row when the claim is no longer this owner's. "Now" is read
-- once the row's lock is held, so a wait behind a claimer never shortens the lease.
DROP PROCEDURE IF EXISTS onceboard.onceboard_extend_lease $$
CREATE PROCEDURE onceboard.onceboard_extend_lease(
  IN p_tenant VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_created_at DATETIME(3),
  IN p_owner VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_attempt INT,
  IN p_lease_ms INT,
  IN p_own_tx BOOLEAN)
BEGIN
  DECLARE v_ts DATETIME(3);
  DECLARE v_lease_until VARCHAR(32);
  DECLARE v_locked INT;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_locked = NULL;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    IF p_own_tx THEN ROLLBACK; END IF;
    RESIGNAL;
  END;
  IF p_own_tx THEN
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
  END IF;
  SELECT 1 INTO v_locked FROM onceboard.effects WHERE tenant_id = p_tenant AND `key` = p_key FOR UPDATE;
  SET v_ts = UTC_TIMESTAMP(3);
  UPDATE onceboard.effects
     SET lease_until = v_ts + INTERVAL p_lease_ms * 1000 MICROSECOND, updated_at = v_ts
   WHERE tenant_id = p_tenant AND `key` = p_key AND created_at = p_created_at AND owner = p_owner AND attempt = p_attempt
     AND status = 'in_progress';
  SELECT CAST(lease_until AS CHAR) INTO v_lease_until
    FROM onceboard.effects
   WHERE tenant_id = p_tenant AND `key` = p_key AND created_at = p_created_at AND owner = p_owner AND attempt = p_attempt
     AND status = 'in_progress';
  IF p_own_tx THEN COMMIT; END IF;
  SELECT v_lease_until AS lease_until;
END $$

-- Releases a stuck claim (the console's release, releaseClaim()): under the row's lock, only an
-- in-progress claim, never an at-most-once step, and unless p_force only once its lease expired;
-- marked failed, so the next delivery retries it at once (attempt + 1). One row: released, and the
-- effect as found (for the refusal's reason), or no row when there is no such effect.
DROP PROCEDURE IF EXISTS onceboard.onceboard_release $$
CREATE PROCEDURE onceboard.onceboard_release(
  IN p_tenant VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_released_by VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_force BOOLEAN,
  IN p_own_tx BOOLEAN)
release_claim: BEGIN
  DECLARE v_ts DATETIME(3);
  DECLARE v_found BOOLEAN DEFAULT TRUE;
  DECLARE v_status VARCHAR(16);
  DECLARE v_policy VARCHAR(16);
  DECLARE v_lease_until DATETIME(3);
  DECLARE v_owner VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE v_attempt INT;
  DECLARE v_released BOOLEAN DEFAULT FALSE;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = FALSE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    IF p_own_tx THEN ROLLBACK; END IF;
    RESIGNAL;
  END;
  IF p_own_tx THEN
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
  END IF;
  SELECT status, policy, lease_until, owner, attempt INTO v_status, v_policy, v_lease_until, v_owner, v_attempt
    FROM onceboard.effects WHERE tenant_id = p_tenant AND `key` = p_key FOR UPDATE;
  -- Now, read once the row's lock is held: the lease is judged as it stands after any wait.
  SET v_ts = UTC_TIMESTAMP(3);
  IF v_found AND v_status = 'in_progress' AND v_policy <> 'at_most_once' AND (p_force OR v_lease_until <= v_ts) THEN
    UPDATE onceboard.effects
       SET error = CONCAT('released by ', p_released_by,
             IF(lease_until <= v_ts, ' after the lease of attempt ', ' while the lease of attempt '), attempt,
             ' (', COALESCE(owner, '?'), ')', IF(lease_until <= v_ts, ' expired', ' was alive')),
           status = 'failed', lease_until = NULL, updated_at = v_ts
     WHERE tenant_id = p_tenant AND `key` = p_key AND status = 'in_progress' AND attempt = v_attempt;
    SELECT status, lease_until, owner, attempt INTO v_status, v_lease_until, v_owner, v_attempt
      FROM onceboard.effects WHERE tenant_id = p_tenant AND `key` = p_key FOR UPDATE;
    SET v_released = v_status = 'failed';
  END IF;
  IF p_own_tx THEN COMMIT; END IF;
  IF v_found THEN
    SELECT v_released AS released, v_status AS status, v_policy AS policy, CAST(v_lease_until AS CHAR) AS lease_until,
           v_owner AS owner, v_attempt AS attempt;
  END IF;
END release_claim $$

DELIMITER ;
