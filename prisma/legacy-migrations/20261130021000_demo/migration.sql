-- The demo workload's own tables (lib/demo). Everything here is demo data: `npm run demo:reset`
-- empties these tables and deletes the rows marked demo in effects and the rollups.

-- The shop's orders. mark-paid sets status and charge_id in the same transaction as its claim.
CREATE TABLE demo_orders (
  tenant_id     text        NOT NULL,
  order_id      text        NOT NULL,
  amount_cents  integer     NOT NULL CHECK (amount_cents > 0),
  status        text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'paid', 'refunded')),
  charge_id     text,
  paid_at       timestamptz,
  refund_wanted boolean     NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT demo_orders_pkey PRIMARY KEY (tenant_id, order_id)
);
CREATE INDEX demo_orders_created_at_idx ON demo_orders (created_at);

-- The fake payment provider's ledger. It honours idempotency keys the way real providers do: the
-- unique key makes a second request with the same key return the first charge (replays counts
-- them) instead of charging again. A double capture is two rows for one order.
CREATE TABLE demo_provider_ledger (
  id               bigserial   NOT NULL,
  tenant_id        text        NOT NULL,
  order_id         text        NOT NULL,
  kind             text        NOT NULL CHECK (kind IN ('capture', 'refund')),
  idempotency_key  text        NOT NULL,
  charge_id        text        NOT NULL,
  amount_cents     integer     NOT NULL,
  replays          integer     NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_replay_at   timestamptz,
  CONSTRAINT demo_provider_ledger_pkey PRIMARY KEY (id),
  CONSTRAINT demo_provider_ledger_idempotency_key_key UNIQUE (idempotency_key)
);
CREATE INDEX demo_provider_ledger_order_idx ON demo_provider_ledger (tenant_id, order_id, kind);

-- The shop's own accounting entries, written by mark-paid inside its transaction. The unique
-- constraint is what the "uncaught unique violation" fault collides with: a handler bug that
-- inserts the same entry twice, which the library counts by constraint name and rethrows.
CREATE TABLE demo_accounting_entries (
  id          bigserial   NOT NULL,
  tenant_id   text        NOT NULL,
  order_id    text        NOT NULL,
  kind        text        NOT NULL,
  amount_cents integer    NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT demo_accounting_entries_pkey PRIMARY KEY (id),
  CONSTRAINT demo_accounting_entries_entry_key UNIQUE (tenant_id, order_id, kind)
);

-- The fake mailer's outbox. It does NOT dedupe: every send is a row, so a second receipt for one
-- order would show here. Receipts are protected only by the at-most-once claim.
CREATE TABLE demo_mailer_outbox (
  id          bigserial   NOT NULL,
  tenant_id   text        NOT NULL,
  order_id    text        NOT NULL,
  recipient   text        NOT NULL,
  subject     text        NOT NULL,
  message_id  text,
  sent_at     timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT demo_mailer_outbox_pkey PRIMARY KEY (id)
);
CREATE INDEX demo_mailer_outbox_order_idx ON demo_mailer_outbox (tenant_id, order_id);

-- Messages parked as dead letters: key-reuse rejects from the adapters, and copies the producer
-- parks on purpose to replay them late (minutes after the first delivery), as an operator
-- replaying a dead-letter queue would.
CREATE TABLE demo_dead_letters (
  id           bigserial   NOT NULL,
  queue        text        NOT NULL,
  data         jsonb       NOT NULL,
  reason       text        NOT NULL,
  parked_at    timestamptz NOT NULL DEFAULT now(),
  replay_after timestamptz,
  replayed_at  timestamptz,
  CONSTRAINT demo_dead_letters_pkey PRIMARY KEY (id)
);
CREATE INDEX demo_dead_letters_due_idx ON demo_dead_letters (replay_after) WHERE replayed_at IS NULL;
