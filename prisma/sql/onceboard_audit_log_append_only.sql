-- onceboard_audit_log_append_only: a console function, and its one source. Edit it here and
-- copy it into a new console migration (prisma/migrations); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The audit log is append-only: nothing may update, delete or truncate its rows. The console never
-- tries; this makes a bug (or a stolen console connection) that tries fail loudly instead.
CREATE OR REPLACE FUNCTION onceboard.onceboard_audit_log_append_only()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
