-- Bulk actions learn a second kind: acknowledging every open reconciliation finding a filter of the
-- Reconciliation page matches (lib/auth/bulk-kinds.ts), on the same tables, runner, cap, cancel and
-- resume as the bulk release.
--
-- A platform admin's findings filter may span every tenant, and a finding whose provider object
-- named no tenant belongs to no tenant at all: such an action has no tenant (NULL: the platform's,
-- which a tenant token never sees). A release still names its one tenant (the library releases a
-- key of one tenant). Items are finding ids (as text) in bulk_action_items.key.
ALTER TABLE onceboard.bulk_actions ALTER COLUMN tenant_id DROP NOT NULL;
-- Why the findings are acknowledged: kept with each finding it changes and in each audit row.
ALTER TABLE onceboard.bulk_actions ADD COLUMN note text;
ALTER TABLE onceboard.bulk_actions DROP CONSTRAINT bulk_actions_kind_check;
ALTER TABLE onceboard.bulk_actions ADD CONSTRAINT bulk_actions_kind_check
  CHECK ((kind = ANY (ARRAY['release_stuck_claims'::text, 'acknowledge_findings'::text])));
ALTER TABLE onceboard.bulk_actions ADD CONSTRAINT bulk_actions_release_tenant_check
  CHECK ((kind <> 'release_stuck_claims'::text OR tenant_id IS NOT NULL));
ALTER TABLE onceboard.bulk_actions ADD CONSTRAINT bulk_actions_acknowledge_note_check
  CHECK ((kind <> 'acknowledge_findings'::text OR note IS NOT NULL));
