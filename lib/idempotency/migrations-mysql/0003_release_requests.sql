-- Releases requested by name (releaseClaim's requestId): the console's release, one or in bulk, on a
-- MySQL store. The console's audit log is in its PostgreSQL and no transaction spans both servers,
-- so the console commits a "requested" audit row naming the request first, then releases here, then
-- audits the outcome. This table makes the middle step safe to repeat and its outcome knowable:
-- the request's row is inserted in the release's own transaction, before the effect is touched, so
-- - a repeat of a request (a bulk runner resuming an item after a crash) waits on the primary key
--   until the first commits, then answers the outcome recorded then, and releases nothing;
-- - settling a request whose outcome the console never heard (onceboard_settle_release) inserts
--   the row itself: if the release committed, its row is there; if it is still running, the insert
--   waits for it; if it rolled back or never arrived, the settle's row ("fenced") wins and a late
--   arrival of the request finds it and releases nothing. No check-then-act: the key decides.
-- Rows are small and few (people release by hand); retention does not prune them.
CREATE TABLE IF NOT EXISTS onceboard.release_requests (
  request_id VARCHAR(100) NOT NULL,
  tenant_id VARCHAR(255) NOT NULL,
  `key` VARCHAR(255) NOT NULL,
  -- released, a refusal's reason (not_found, completed, not_in_progress, at_most_once, lease_alive),
  -- or fenced (settled before the request arrived: it never ran). Never 'pending' once committed.
  outcome VARCHAR(16) NOT NULL,
  attempt INT NULL,
  released_by VARCHAR(255) NOT NULL,
  decided_at DATETIME(3) NOT NULL,
  PRIMARY KEY (request_id),
  CONSTRAINT release_requests_outcome_check CHECK (outcome IN ('pending', 'released', 'not_found', 'completed',
    'not_in_progress', 'at_most_once', 'lease_alive', 'fenced'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

DELIMITER $$

-- onceboard_release's decision (0001_baseline.sql) under a request id, in a transaction of its own.
-- One row: repeated (this request was decided before: its recorded outcome, nothing done now),
-- outcome, released, and the effect as it stands (status, policy, lease_until, owner, attempt; null
-- when there is no such effect). A request id reused for another tenant or key is an error (45000).
DROP PROCEDURE IF EXISTS onceboard.onceboard_release_request $$
CREATE PROCEDURE onceboard.onceboard_release_request(
  IN p_request VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_tenant VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_released_by VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_force BOOLEAN)
BEGIN
  DECLARE v_ts DATETIME(3);
  DECLARE v_repeat BOOLEAN DEFAULT FALSE;
  DECLARE v_found BOOLEAN DEFAULT TRUE;
  DECLARE v_status VARCHAR(16);
  DECLARE v_policy VARCHAR(16);
  DECLARE v_lease_until DATETIME(3);
  DECLARE v_owner VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE v_attempt INT;
  DECLARE v_outcome VARCHAR(16);
  DECLARE v_recorded_attempt INT;
  DECLARE v_req_tenant VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE v_req_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = FALSE;
  -- The request's key taken: by a committed earlier run of it, or by a settle that fenced it.
  DECLARE CONTINUE HANDLER FOR 1062 SET v_repeat = TRUE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION;
  INSERT INTO onceboard.release_requests (request_id, tenant_id, `key`, outcome, attempt, released_by, decided_at)
  VALUES (p_request, p_tenant, p_key, 'pending', NULL, p_released_by, UTC_TIMESTAMP(3));
  IF v_repeat THEN
    SELECT tenant_id, `key`, outcome, attempt INTO v_req_tenant, v_req_key, v_outcome, v_recorded_attempt
      FROM onceboard.release_requests WHERE request_id = p_request;
    IF v_req_tenant <> p_tenant OR v_req_key <> p_key THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'onceboard: this release request id names another tenant or key';
    END IF;
  END IF;
  SELECT status, policy, lease_until, owner, attempt INTO v_status, v_policy, v_lease_until, v_owner, v_attempt
    FROM onceboard.effects WHERE tenant_id = p_tenant AND `key` = p_key FOR UPDATE;
  IF NOT v_repeat THEN
    -- Now, read once the row's lock is held: the lease is judged as it stands after any wait.
    SET v_ts = UTC_TIMESTAMP(3);
    IF NOT v_found THEN
      SET v_outcome = 'not_found';
    ELSEIF v_status = 'completed' THEN
      SET v_outcome = 'completed';
    ELSEIF v_status <> 'in_progress' THEN
      SET v_outcome = 'not_in_progress';
    ELSEIF v_policy = 'at_most_once' THEN
      SET v_outcome = 'at_most_once';
    ELSEIF NOT p_force AND v_lease_until > v_ts THEN
      SET v_outcome = 'lease_alive';
    ELSE
      UPDATE onceboard.effects
         SET error = CONCAT('released by ', p_released_by,
               IF(lease_until <= v_ts, ' after the lease of attempt ', ' while the lease of attempt '), attempt,
               ' (', COALESCE(owner, '?'), ')', IF(lease_until <= v_ts, ' expired', ' was alive')),
             status = 'failed', lease_until = NULL, updated_at = v_ts
       WHERE tenant_id = p_tenant AND `key` = p_key AND status = 'in_progress' AND attempt = v_attempt;
      SET v_outcome = 'released';
      SET v_recorded_attempt = v_attempt;
      SET v_status = 'failed';
      SET v_lease_until = NULL;
    END IF;
    UPDATE onceboard.release_requests SET outcome = v_outcome, attempt = v_recorded_attempt, decided_at = v_ts
     WHERE request_id = p_request;
  END IF;
  COMMIT;
  SELECT v_repeat AS repeated, v_outcome AS outcome, v_recorded_attempt AS released_attempt,
         IF(v_found, v_status, NULL) AS status, IF(v_found, v_policy, NULL) AS policy,
         IF(v_found, CAST(v_lease_until AS CHAR), NULL) AS lease_until, IF(v_found, v_owner, NULL) AS owner,
         IF(v_found, v_attempt, NULL) AS attempt;
END $$

-- Decides a request whose outcome was never heard (the console lost its connection mid-release):
-- inserts the request's row as 'fenced' unless it is there. A release of it that committed is there
-- and answered; one still running is waited for on the key; one that rolled back or has not arrived
-- yet is fenced, and if it arrives later onceboard_release_request finds the row and does nothing.
-- One row: the outcome (fenced: it never ran) and the attempt it released.
DROP PROCEDURE IF EXISTS onceboard.onceboard_settle_release $$
CREATE PROCEDURE onceboard.onceboard_settle_release(
  IN p_request VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_tenant VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin,
  IN p_settled_by VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin)
BEGIN
  DECLARE v_taken BOOLEAN DEFAULT FALSE;
  DECLARE CONTINUE HANDLER FOR 1062 SET v_taken = TRUE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION;
  INSERT INTO onceboard.release_requests (request_id, tenant_id, `key`, outcome, attempt, released_by, decided_at)
  VALUES (p_request, p_tenant, p_key, 'fenced', NULL, p_settled_by, UTC_TIMESTAMP(3));
  COMMIT;
  SELECT outcome, attempt, tenant_id, `key` FROM onceboard.release_requests WHERE request_id = p_request;
END $$

DELIMITER ;
