-- The demo's own tables (the shop the live demo runs: orders, a payment provider's ledger, a mailer's
-- outbox, accounting entries, dead letters), in their own schema so that no production migration
-- creates them: lib/demo/schema.ts installs this when the demo starts, `npm run demo:reset` drops it.
-- Idempotent: run at every demo start.

CREATE SCHEMA IF NOT EXISTS onceboard_demo;

CREATE TABLE IF NOT EXISTS onceboard_demo.demo_accounting_entries (
  id bigserial NOT NULL,
  tenant_id text NOT NULL,
  order_id text NOT NULL,
  kind text NOT NULL,
  amount_cents integer NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT demo_accounting_entries_entry_key UNIQUE (tenant_id, order_id, kind),
  CONSTRAINT demo_accounting_entries_pkey PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS onceboard_demo.demo_dead_letters (
  id bigserial NOT NULL,
  queue text NOT NULL,
  data jsonb NOT NULL,
  reason text NOT NULL,
  parked_at timestamp with time zone NOT NULL DEFAULT now(),
  replay_after timestamp with time zone,
  replayed_at timestamp with time zone,
  CONSTRAINT demo_dead_letters_pkey PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS onceboard_demo.demo_mailer_outbox (
  id bigserial NOT NULL,
  tenant_id text NOT NULL,
  order_id text NOT NULL,
  recipient text NOT NULL,
  subject text NOT NULL,
  message_id text,
  sent_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT demo_mailer_outbox_pkey PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS onceboard_demo.demo_orders (
  tenant_id text NOT NULL,
  order_id text NOT NULL,
  amount_cents integer NOT NULL,
  status text NOT NULL DEFAULT 'pending'::text,
  charge_id text,
  paid_at timestamp with time zone,
  refund_wanted boolean NOT NULL DEFAULT false,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT demo_orders_amount_cents_check CHECK ((amount_cents > 0)),
  CONSTRAINT demo_orders_pkey PRIMARY KEY (tenant_id, order_id),
  CONSTRAINT demo_orders_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'paid'::text, 'refunded'::text])))
);

CREATE TABLE IF NOT EXISTS onceboard_demo.demo_provider_ledger (
  id bigserial NOT NULL,
  tenant_id text NOT NULL,
  order_id text NOT NULL,
  kind text NOT NULL,
  idempotency_key text NOT NULL,
  charge_id text NOT NULL,
  amount_cents integer NOT NULL,
  replays integer NOT NULL DEFAULT 0,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  last_replay_at timestamp with time zone,
  CONSTRAINT demo_provider_ledger_idempotency_key_key UNIQUE (idempotency_key),
  CONSTRAINT demo_provider_ledger_kind_check CHECK ((kind = ANY (ARRAY['capture'::text, 'refund'::text]))),
  CONSTRAINT demo_provider_ledger_pkey PRIMARY KEY (id)
);

CREATE INDEX IF NOT EXISTS demo_dead_letters_due_idx ON onceboard_demo.demo_dead_letters USING btree (replay_after) WHERE (replayed_at IS NULL);
CREATE INDEX IF NOT EXISTS demo_mailer_outbox_order_idx ON onceboard_demo.demo_mailer_outbox USING btree (tenant_id, order_id);
CREATE INDEX IF NOT EXISTS demo_orders_created_at_idx ON onceboard_demo.demo_orders USING btree (created_at);
CREATE INDEX IF NOT EXISTS demo_provider_ledger_order_idx ON onceboard_demo.demo_provider_ledger USING btree (tenant_id, order_id, kind);
