-- Two limits the database keeps, so no check-then-act can slip past them (issue 35, finding 7).
--
-- A token minted by another token (POST /api/v1/tokens with a token, or a token's console session)
-- names its minter. Revoking a token revokes every token it minted, transitively, in the same
-- transaction (lib/auth/tokens.ts), and a minted token never expires after its minter
-- (lib/auth/token-admin.ts). NULL: minted on the host (`npm run token`) or by a person signed in
-- through the identity provider. A minter is not deleted while it has minted tokens (checked at
-- the end of the statement, so one DELETE may remove a minter and what it minted together).
ALTER TABLE onceboard.api_tokens ADD COLUMN minted_by uuid;
ALTER TABLE onceboard.api_tokens ADD CONSTRAINT api_tokens_minted_by_fkey
  FOREIGN KEY (minted_by) REFERENCES onceboard.api_tokens (id);
CREATE INDEX api_tokens_minted_by_idx ON onceboard.api_tokens (minted_by);

-- One live bulk action per target set: five identical bulk releases over the same claims were all
-- accepted at once. target_hash is the SHA-256 of the action's items (lib/auth/bulk-actions.ts),
-- set in the transaction that snapshots them; while an action is queued or running, a second one
-- of the same kind over the same tenant and the same items fails this index and answers 409 naming
-- the first. NULL (while the items are being written, and actions from before): never a conflict.
ALTER TABLE onceboard.bulk_actions ADD COLUMN target_hash text;
CREATE UNIQUE INDEX bulk_actions_live_target_key ON onceboard.bulk_actions (kind, COALESCE(tenant_id, ''), target_hash)
  WHERE state = ANY (ARRAY['queued'::text, 'running'::text]) AND target_hash IS NOT NULL;
