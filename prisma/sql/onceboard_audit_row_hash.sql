-- onceboard_audit_row_hash: a console function, and its one source. Edit it here and copy it into a new console
-- migration (prisma/migrations); never edit a migration.
-- scripts/sql-sources.test.ts checks the migrated database defines it exactly so.

-- The audit chain's canonical form (lib/auth/audit-chain.ts recomputes it in Node, independently
-- of this function): sha256 hex of prev_hash || the jsonb text of [seq, id, at in epoch
-- microseconds, token_id, actor, tenant_id, action, target, detail, ip, result].
CREATE OR REPLACE FUNCTION onceboard.onceboard_audit_row_hash(prev_hash text, r onceboard.audit_log)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT encode(sha256(convert_to(prev_hash || jsonb_build_array(
    r.seq, r.id, (extract(epoch FROM r.at) * 1000000)::bigint, r.token_id, r.actor, r.tenant_id,
    r.action, r.target, r.detail, r.ip, r.result)::text, 'UTF8')), 'hex')
$$;
