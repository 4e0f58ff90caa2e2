-- The demo shop's tables on MariaDB / MySQL (DEMO_STORE=mariadb, `npm run soak -- --store mariadb`),
-- in the database that holds the worker library's tables: mark-paid is a transactional step, so the
-- order's update and its accounting entry commit in the transaction that completes the claim, and
-- that transaction is on the effects store's server. The same tables as schema.sql's, minus the
-- dead letters (the producer parks its late replays in the demo's PostgreSQL, beside the broker).
-- Idempotent: run at every demo start (lib/demo/shop.ts). Instants are UTC DATETIME(3).

CREATE TABLE IF NOT EXISTS demo_orders (
  tenant_id VARCHAR(64) NOT NULL,
  order_id VARCHAR(128) NOT NULL,
  amount_cents INT NOT NULL,
  status VARCHAR(16) NOT NULL DEFAULT 'pending',
  charge_id VARCHAR(255) NULL,
  paid_at DATETIME(3) NULL,
  refund_wanted BOOLEAN NOT NULL DEFAULT FALSE,
  created_at DATETIME(3) NOT NULL DEFAULT (UTC_TIMESTAMP(3)),
  PRIMARY KEY (tenant_id, order_id),
  KEY demo_orders_created_at_idx (created_at),
  KEY demo_orders_paid_at_idx (paid_at),
  CONSTRAINT demo_orders_amount_cents_check CHECK (amount_cents > 0),
  CONSTRAINT demo_orders_status_check CHECK (status IN ('pending', 'paid', 'refunded'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS demo_accounting_entries (
  id BIGINT NOT NULL AUTO_INCREMENT,
  tenant_id VARCHAR(64) NOT NULL,
  order_id VARCHAR(128) NOT NULL,
  kind VARCHAR(32) NOT NULL,
  amount_cents INT NOT NULL,
  created_at DATETIME(3) NOT NULL DEFAULT (UTC_TIMESTAMP(3)),
  PRIMARY KEY (id),
  UNIQUE KEY demo_accounting_entries_entry_key (tenant_id, order_id, kind)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A receipt whose worker the crash fault killed after the claim and before the send.
CREATE TABLE IF NOT EXISTS demo_unsent_receipts (
  tenant_id VARCHAR(64) NOT NULL,
  effect_key VARCHAR(255) NOT NULL,
  recorded_at DATETIME(3) NOT NULL DEFAULT (UTC_TIMESTAMP(3)),
  PRIMARY KEY (tenant_id, effect_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
