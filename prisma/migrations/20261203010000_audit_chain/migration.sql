-- The audit log becomes a hash chain: each row carries `seq` (1, 2, 3, … with no gaps) and `hash`,
-- sha256 over the previous row's hash and this row's canonical fields. A row changed, removed or
-- inserted out of order afterwards — even by a superuser who turned the triggers off — breaks the
-- chain at that row, and `npm run audit -- verify` (lib/auth/audit-chain.ts) names it.
--
-- The hash is computed here, in the database, by a BEFORE INSERT trigger: whatever a caller sends
-- for id, seq, at or hash is overwritten. Appends are serialised by a row lock on the chain's head
-- (one row holding the last seq and hash), taken in the trigger: concurrent inserts from any number
-- of connections still form one chain, and the head also shows when rows were cut off the end.
--
-- The console does not own any of this (lib/db/roles.ts): it may INSERT and SELECT audit_log only,
-- and the functions run as their owner with a fixed search_path, so the console's role cannot
-- shadow what they call.

CREATE TABLE onceboard.audit_chain_head (
  singleton boolean NOT NULL DEFAULT true,
  seq       bigint  NOT NULL,
  hash      text    NOT NULL,
  CONSTRAINT audit_chain_head_pkey PRIMARY KEY (singleton),
  CONSTRAINT audit_chain_head_singleton_check CHECK (singleton)
);

ALTER TABLE onceboard.audit_log ADD COLUMN seq bigint, ADD COLUMN hash text;

-- The canonical form (lib/auth/audit-chain.ts recomputes it in Node, independently of this function):
-- sha256 hex of prev_hash || the jsonb text of [seq, id, at in epoch microseconds, token_id, actor,
-- tenant_id, action, target, detail, ip, result]. Epoch microseconds, not a timestamp's text,
-- which would follow the session's TimeZone.
CREATE FUNCTION onceboard.onceboard_audit_row_hash(prev_hash text, r onceboard.audit_log)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT encode(sha256(convert_to(prev_hash || jsonb_build_array(
    r.seq, r.id, (extract(epoch FROM r.at) * 1000000)::bigint, r.token_id, r.actor, r.tenant_id,
    r.action, r.target, r.detail, r.ip, r.result)::text, 'UTF8')), 'hex')
$$;

-- Rows written before the chain existed join it in id order.
ALTER TABLE onceboard.audit_log DISABLE TRIGGER audit_log_append_only;
DO $$
DECLARE
  r onceboard.audit_log;
  prev text := repeat('0', 64);
  n bigint := 0;
BEGIN
  FOR r IN SELECT * FROM onceboard.audit_log ORDER BY id LOOP
    n := n + 1;
    r.seq := n;
    prev := onceboard.onceboard_audit_row_hash(prev, r);
    UPDATE onceboard.audit_log SET seq = n, hash = prev WHERE id = r.id;
  END LOOP;
  INSERT INTO onceboard.audit_chain_head (seq, hash) VALUES (n, prev);
END;
$$;
ALTER TABLE onceboard.audit_log ENABLE TRIGGER audit_log_append_only;

ALTER TABLE onceboard.audit_log ALTER COLUMN seq SET NOT NULL, ALTER COLUMN hash SET NOT NULL;
CREATE UNIQUE INDEX audit_log_seq_key ON onceboard.audit_log (seq);

-- SECURITY DEFINER: the console's role may not touch the head (nor forge seq/hash), the trigger
-- does it for it. id is drawn here too, under the head's lock, so id order is chain order (the
-- audit API pages by id).
CREATE FUNCTION onceboard.onceboard_audit_log_chain()
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
REVOKE ALL ON FUNCTION onceboard.onceboard_audit_log_chain() FROM PUBLIC;
CREATE TRIGGER audit_log_chain
  BEFORE INSERT ON onceboard.audit_log
  FOR EACH ROW EXECUTE FUNCTION onceboard.onceboard_audit_log_chain();
