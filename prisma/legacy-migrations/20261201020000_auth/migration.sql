-- Issue 10: tokens, sessions, audit and key lookups.

-- What an audited action came to (ok, not_found, refused, …): a read that found nothing is audited too.
ALTER TABLE audit_log ADD COLUMN result text NOT NULL DEFAULT 'ok';

-- The audit log is append-only: nothing may update, delete or truncate its rows. The console never
-- tries; this makes a bug (or a stolen console connection) that tries fail loudly instead.
CREATE FUNCTION onceboard_audit_log_append_only()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER audit_log_append_only
  BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION onceboard_audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate
  BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION onceboard_audit_log_append_only();

-- One-time login links (npm start on an empty database, `npm run token -- link <id>`): the code is
-- stored hashed, used at most once (an UPDATE … WHERE used_at IS NULL claims it atomically), and expires.
CREATE TABLE login_links (
  code_hash   text        NOT NULL,
  token_id    uuid        NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  CONSTRAINT login_links_pkey PRIMARY KEY (code_hash)
);

-- The last occurrence of each uncaught violation, so a count links to the keys involved.
ALTER TABLE uncaught_violations_minute
  ADD COLUMN last_tenant_id  text,
  ADD COLUMN last_key        text,
  ADD COLUMN last_message_id text;
