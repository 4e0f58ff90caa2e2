-- Bulk actions: one action on every row a filter matched ("release every stuck claim matching
-- this filter"), run in the background by the console (lib/auth/bulk-runner.ts).
--
-- The matched rows are fixed when the action is created (bulk_action_items, in the order they run):
-- what the dry run counted is what runs, a claim that gets stuck later is not swept in, and the
-- cap is enforced on a number that cannot grow. Each item's outcome commits in the transaction that
-- applies it (with its audit row), so a console killed mid-way resumes at the first item without
-- one and applies each exactly once.
--
-- One process runs an action at a time: it claims the row (FOR UPDATE SKIP LOCKED) and holds a
-- lease it renews; every item's transaction updates the action row only while the lease is its own
-- and the action is still running, so a process that lost the lease (or a cancelled action) cannot
-- apply another item. `kind` names what is done to each item; new kinds (acknowledging
-- reconciliation findings) add a value to the check and an entry to lib/auth/bulk-kinds.ts.
CREATE TABLE onceboard.bulk_actions (
  id                   uuid        NOT NULL DEFAULT gen_random_uuid(),
  kind                 text        NOT NULL,
  tenant_id            text        NOT NULL,
  -- The filter as it was given (for people and the audit log; the items are the truth).
  filter               jsonb       NOT NULL,
  state                text        NOT NULL DEFAULT 'queued',
  total                integer     NOT NULL,
  processed            integer     NOT NULL DEFAULT 0,
  applied              integer     NOT NULL DEFAULT 0,
  -- Who asked: the runner audits each item as them.
  token_id             uuid,
  actor                text        NOT NULL,
  role                 text        NOT NULL,
  ip                   text,
  created_at           timestamptz NOT NULL DEFAULT now(),
  started_at           timestamptz,
  finished_at          timestamptz,
  cancelled_by         text,
  lease_owner          text,
  lease_until          timestamptz,
  error                text,
  CONSTRAINT bulk_actions_pkey PRIMARY KEY (id),
  CONSTRAINT bulk_actions_kind_check CHECK ((kind = ANY (ARRAY['release_stuck_claims'::text]))),
  CONSTRAINT bulk_actions_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'running'::text, 'done'::text, 'cancelled'::text, 'failed'::text]))),
  CONSTRAINT bulk_actions_progress_check CHECK ((processed >= 0 AND processed <= total AND applied <= processed))
);
-- What the runner looks for: actions still to run.
CREATE INDEX bulk_actions_runnable_idx ON onceboard.bulk_actions (created_at) WHERE state = ANY (ARRAY['queued'::text, 'running'::text]);

CREATE TABLE onceboard.bulk_action_items (
  action_id  uuid        NOT NULL,
  seq        integer     NOT NULL,
  key        text        NOT NULL,
  -- null: not yet applied; else what applying it came to (ok, or the refusal: lease_alive, …).
  outcome    text,
  done_at    timestamptz,
  CONSTRAINT bulk_action_items_pkey PRIMARY KEY (action_id, seq),
  CONSTRAINT bulk_action_items_key_unique UNIQUE (action_id, key),
  CONSTRAINT bulk_action_items_action_id_fkey FOREIGN KEY (action_id) REFERENCES onceboard.bulk_actions (id) ON DELETE CASCADE
);
