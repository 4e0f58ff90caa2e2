-- Reconciliation compares what Onceboard recorded for external steps with what the provider itself
-- holds (Stripe PaymentIntents, a mailer's received messages). A run covers one provider and one
-- window of creation time; its findings name each disagreement once, by a stable identity, so a
-- rerun of a window upserts and never duplicates.
CREATE TABLE onceboard.reconciliation_runs (
  id             bigserial   NOT NULL,
  provider       text        NOT NULL,
  window_from    timestamptz NOT NULL,
  window_to      timestamptz NOT NULL,
  grace_seconds  integer     NOT NULL,
  status         text        NOT NULL,
  trigger        text        NOT NULL,
  requested_by   text,
  started_at     timestamptz NOT NULL DEFAULT now(),
  finished_at    timestamptz,
  heartbeat_at   timestamptz,
  -- The provider's cursor and the counts so far: a run killed mid-way resumes from here.
  checkpoint     jsonb,
  objects_seen   bigint      NOT NULL DEFAULT 0,
  effects_seen   bigint      NOT NULL DEFAULT 0,
  matched        bigint      NOT NULL DEFAULT 0,
  counts         jsonb       NOT NULL DEFAULT '{}'::jsonb,
  error          text,
  CONSTRAINT reconciliation_runs_pkey PRIMARY KEY (id),
  CONSTRAINT reconciliation_runs_status_check CHECK ((status = ANY (ARRAY['running'::text, 'completed'::text, 'failed'::text]))),
  CONSTRAINT reconciliation_runs_trigger_check CHECK ((trigger = ANY (ARRAY['schedule'::text, 'manual'::text, 'api'::text]))),
  CONSTRAINT reconciliation_runs_window_check CHECK ((window_from < window_to))
);
CREATE INDEX reconciliation_runs_provider_window_idx ON onceboard.reconciliation_runs (provider, window_from, window_to, started_at DESC);
CREATE INDEX reconciliation_runs_started_at_idx ON onceboard.reconciliation_runs (started_at DESC);

CREATE TABLE onceboard.reconciliation_findings (
  id                bigserial   NOT NULL,
  -- provider, kind and the key or provider object it is about: the same disagreement found again
  -- by a later run is the same row.
  identity          text        NOT NULL,
  provider          text        NOT NULL,
  kind              text        NOT NULL,
  -- NULL when the provider object names no tenant (a legacy path, an unknown key).
  tenant_id         text,
  job_type          text,
  effect_key        text,
  provider_object_ids text[]    NOT NULL DEFAULT '{}'::text[],
  ours              jsonb,
  theirs            jsonb       NOT NULL DEFAULT '[]'::jsonb,
  detail            text        NOT NULL,
  first_run_id      bigint,
  last_run_id       bigint,
  first_seen_at     timestamptz NOT NULL DEFAULT now(),
  last_seen_at      timestamptz NOT NULL DEFAULT now(),
  state             text        NOT NULL DEFAULT 'open'::text,
  state_note        text,
  state_changed_by  text,
  state_changed_at  timestamptz,
  CONSTRAINT reconciliation_findings_pkey PRIMARY KEY (id),
  CONSTRAINT reconciliation_findings_identity_key UNIQUE (identity),
  CONSTRAINT reconciliation_findings_kind_check CHECK ((kind = ANY (ARRAY['duplicated_at_provider'::text, 'missing_at_provider'::text, 'unknown_to_onceboard'::text, 'drift'::text, 'pending'::text]))),
  CONSTRAINT reconciliation_findings_state_check CHECK ((state = ANY (ARRAY['open'::text, 'acknowledged'::text, 'resolved'::text]))),
  CONSTRAINT reconciliation_findings_first_run_id_fkey FOREIGN KEY (first_run_id) REFERENCES onceboard.reconciliation_runs (id),
  CONSTRAINT reconciliation_findings_last_run_id_fkey FOREIGN KEY (last_run_id) REFERENCES onceboard.reconciliation_runs (id)
);
CREATE INDEX reconciliation_findings_filter_idx ON onceboard.reconciliation_findings (state, kind, provider, tenant_id, last_seen_at DESC);
CREATE INDEX reconciliation_findings_key_idx ON onceboard.reconciliation_findings (tenant_id, effect_key);

-- What the key verdict reads ("reconciled 4 min ago"): the windows a completed run covered.
CREATE TABLE onceboard.reconciliation_coverage (
  provider      text        NOT NULL,
  window_from   timestamptz NOT NULL,
  window_to     timestamptz NOT NULL,
  run_id        bigint      NOT NULL,
  completed_at  timestamptz NOT NULL,
  CONSTRAINT reconciliation_coverage_pkey PRIMARY KEY (provider, window_from, window_to),
  CONSTRAINT reconciliation_coverage_run_id_fkey FOREIGN KEY (run_id) REFERENCES onceboard.reconciliation_runs (id)
);
CREATE INDEX reconciliation_coverage_window_idx ON onceboard.reconciliation_coverage (provider, window_to DESC);

-- A run's provider objects, staged page by page so the comparison is one SQL statement over the
-- whole window while the reconciler holds one page in memory. Unlogged (no WAL for a million
-- rows): a crash of PostgreSQL empties it, and a resumed run whose checkpoint counts more staged
-- objects than are here reads the provider again from the start. Emptied when the run ends.
CREATE UNLOGGED TABLE onceboard.reconciliation_staged_objects (
  run_id      bigint      NOT NULL,
  object_id   text        NOT NULL,
  object_key  text,
  tenant_id   text,
  amount      bigint,
  currency    text,
  status      text,
  created     timestamptz NOT NULL,
  metadata    jsonb       NOT NULL DEFAULT '{}'::jsonb,
  CONSTRAINT reconciliation_staged_objects_pkey PRIMARY KEY (run_id, object_id)
);
CREATE INDEX reconciliation_staged_objects_key_idx ON onceboard.reconciliation_staged_objects (run_id, tenant_id, object_key);
