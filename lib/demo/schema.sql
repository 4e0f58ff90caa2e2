-- The demo's own tables (the shop the live demo runs: orders, accounting entries, dead letters,
-- the receipts its crash fault kept from being sent), in their own schema so that no production
-- migration creates them: lib/demo/schema.ts installs this when the demo starts, `npm run
-- demo:reset` drops it. Idempotent: run at every demo start. The payment provider and the mailer
-- are not the shop's tables: they are the demo's provider process, with storage of its own
-- (lib/demo/stripe-server.ts, lib/demo/mailer-server.ts).

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

-- A receipt whose worker the crash fault killed after the claim and before the send: the email
-- was never sent. demo:verify's ground truth for the mailer's reconciliation.
CREATE TABLE IF NOT EXISTS onceboard_demo.demo_unsent_receipts (
  tenant_id text NOT NULL,
  effect_key text NOT NULL,
  recorded_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT demo_unsent_receipts_pkey PRIMARY KEY (tenant_id, effect_key)
);

-- The fake ledger and outbox the handlers wrote before the provider process existed.
DROP TABLE IF EXISTS onceboard_demo.demo_provider_ledger;
DROP TABLE IF EXISTS onceboard_demo.demo_mailer_outbox;

CREATE INDEX IF NOT EXISTS demo_dead_letters_due_idx ON onceboard_demo.demo_dead_letters USING btree (replay_after) WHERE (replayed_at IS NULL);
CREATE INDEX IF NOT EXISTS demo_orders_created_at_idx ON onceboard_demo.demo_orders USING btree (created_at);
