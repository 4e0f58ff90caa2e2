-- onceboard_audit_log_append_only: the one source of this function. Edit it here, then stamp a migration with
-- `npm run db:stamp -- <name>` (scripts/stamp-sql-migration.ts); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The audit log is append-only: nothing may update, delete or truncate its rows. The console never
-- tries; this makes a bug (or a stolen console connection) that tries fail loudly instead.
CREATE OR REPLACE FUNCTION onceboard_audit_log_append_only()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
