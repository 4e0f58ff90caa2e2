-- Console processes keep who a token or session is for a moment (lib/auth/auth-cache.ts) and drop
-- it when told that a token or session changed in a way that could end it: revoked, its expiry,
-- role, tenant or secret changed, or the row deleted. Told by these triggers, so every path that
-- ends one (logout, the admin API, the CLI, SQL typed by hand) tells them, at its commit. The
-- stamps of last use (last_used_at, last_seen_at) change nothing a request is allowed, and notify
-- nobody.
-- Source: prisma/sql/onceboard_auth_changed_notify.sql.
CREATE OR REPLACE FUNCTION onceboard.onceboard_auth_changed_notify()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('onceboard_auth_changed', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_tokens_auth_changed
  AFTER UPDATE OF revoked_at, expires_at, role, tenant_id, token_hash ON onceboard.api_tokens
  FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
        OR OLD.role IS DISTINCT FROM NEW.role OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
        OR OLD.token_hash IS DISTINCT FROM NEW.token_hash)
  EXECUTE FUNCTION onceboard.onceboard_auth_changed_notify();
CREATE TRIGGER api_tokens_auth_deleted
  AFTER DELETE ON onceboard.api_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION onceboard.onceboard_auth_changed_notify();

CREATE TRIGGER console_sessions_auth_changed
  AFTER UPDATE OF revoked_at, expires_at, token_id, role, tenant_id ON onceboard.console_sessions
  FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
        OR OLD.token_id IS DISTINCT FROM NEW.token_id OR OLD.role IS DISTINCT FROM NEW.role
        OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id)
  EXECUTE FUNCTION onceboard.onceboard_auth_changed_notify();
CREATE TRIGGER console_sessions_auth_deleted
  AFTER DELETE ON onceboard.console_sessions
  FOR EACH STATEMENT EXECUTE FUNCTION onceboard.onceboard_auth_changed_notify();
