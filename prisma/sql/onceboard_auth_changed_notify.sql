-- onceboard_auth_changed_notify: a console function, and its one source. Edit it here and
-- copy it into a new console migration (prisma/migrations); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- Tells every console process (LISTEN onceboard_auth_changed, lib/auth/auth-cache.ts) that a token
-- or session changed in a way that could end it, so none answers who it is from memory. At commit;
-- PostgreSQL folds identical notifications of one transaction into one.
CREATE OR REPLACE FUNCTION onceboard.onceboard_auth_changed_notify()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('onceboard_auth_changed', '');
  RETURN NULL;
END;
$$;
