-- The console's own tables: API tokens, one-time login links and the audit log. They live in the
-- library's schema (`onceboard`, or ONCEBOARD_SCHEMA: lib/db/migrate.ts rewrites the qualifier),
-- beside the tables the worker library installs with its own migrate(); nothing goes to `public`.
-- The demo's tables are not here: the demo installs its own schema when it starts (lib/demo/schema.ts).
--
-- A database made by the pre-schema chain (prisma/legacy-migrations) already has these tables;
-- lib/db/upgrade-legacy.ts moves them here and records this migration as applied.

CREATE TABLE onceboard.api_tokens (
  id            uuid        NOT NULL DEFAULT gen_random_uuid(),
  name          text        NOT NULL,
  tenant_id     text,
  role          text        NOT NULL,
  token_hash    text        NOT NULL,
  prefix        text        NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,
  revoked_at    timestamptz,
  last_used_at  timestamptz,
  CONSTRAINT api_tokens_pkey PRIMARY KEY (id),
  CONSTRAINT api_tokens_role_check CHECK ((role = ANY (ARRAY['viewer'::text, 'operator'::text, 'admin'::text])))
);
CREATE UNIQUE INDEX api_tokens_token_hash_key ON onceboard.api_tokens (token_hash);

-- Stored hashed, used at most once (an UPDATE … WHERE used_at IS NULL claims it atomically), expiring.
CREATE TABLE onceboard.login_links (
  code_hash   text        NOT NULL,
  token_id    uuid        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  CONSTRAINT login_links_pkey PRIMARY KEY (code_hash),
  CONSTRAINT login_links_token_id_fkey FOREIGN KEY (token_id) REFERENCES onceboard.api_tokens (id) ON DELETE CASCADE
);

CREATE TABLE onceboard.audit_log (
  id         bigserial   NOT NULL,
  at         timestamptz NOT NULL DEFAULT now(),
  token_id   uuid,
  actor      text        NOT NULL,
  tenant_id  text,
  action     text        NOT NULL,
  target     text,
  detail     jsonb,
  ip         text,
  -- What the audited action came to (ok, not_found, refused, …): a read that found nothing is audited too.
  result     text        NOT NULL DEFAULT 'ok',
  CONSTRAINT audit_log_pkey PRIMARY KEY (id)
);
CREATE INDEX audit_log_at_idx ON onceboard.audit_log (at);
CREATE INDEX audit_log_tenant_id_at_idx ON onceboard.audit_log (tenant_id, at);

-- The audit log is append-only: nothing may update, delete or truncate its rows. The console never
-- tries; this makes a bug (or a stolen console connection) that tries fail loudly instead.
-- Source: lib/idempotency/sql/onceboard_audit_log_append_only.sql.
CREATE OR REPLACE FUNCTION onceboard.onceboard_audit_log_append_only()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER audit_log_append_only
  BEFORE UPDATE OR DELETE ON onceboard.audit_log
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate
  BEFORE TRUNCATE ON onceboard.audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION onceboard.onceboard_audit_log_append_only();
