-- onceboard_audit_log_chain: a console function, and its one source. Edit it here and copy it into a new console
-- migration (prisma/migrations); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The BEFORE INSERT trigger of audit_log: appends the row to the hash chain under the head's row
-- lock, overwriting whatever the caller sent for id, seq, at and hash. SECURITY DEFINER: the
-- console's role may not touch the head itself.
CREATE OR REPLACE FUNCTION onceboard.onceboard_audit_log_chain()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  head onceboard.audit_chain_head;
BEGIN
  SELECT * INTO STRICT head FROM onceboard.audit_chain_head FOR UPDATE;
  NEW.id := nextval('onceboard.audit_log_id_seq'::regclass);
  NEW.seq := head.seq + 1;
  NEW.at := clock_timestamp();
  NEW.hash := onceboard.onceboard_audit_row_hash(head.hash, NEW);
  UPDATE onceboard.audit_chain_head SET seq = NEW.seq, hash = NEW.hash;
  RETURN NEW;
END;
$$;
