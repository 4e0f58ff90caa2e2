-- A person signed in through the identity provider (OIDC) has a console session but no token: the
-- session row itself carries who they are (issuer and subject), the name the audit log gives them,
-- and the role and tenant their groups mapped to at sign-in. The ID token is kept as the
-- id_token_hint of RP-initiated logout (it grants nothing here; the session's row does).
ALTER TABLE onceboard.console_sessions ALTER COLUMN token_id DROP NOT NULL;
ALTER TABLE onceboard.console_sessions
  ADD COLUMN oidc_issuer   text,
  ADD COLUMN oidc_subject  text,
  ADD COLUMN actor         text,
  ADD COLUMN role          text,
  ADD COLUMN tenant_id     text,
  ADD COLUMN id_token      text;
ALTER TABLE onceboard.console_sessions DROP CONSTRAINT console_sessions_signed_in_with_check;
ALTER TABLE onceboard.console_sessions ADD CONSTRAINT console_sessions_signed_in_with_check
  CHECK ((signed_in_with = ANY (ARRAY['token'::text, 'link'::text, 'oidc'::text])));
-- Exactly one kind of principal per row: a token's session names its token and nothing else; an
-- OIDC session names its subject, actor and role (tenant_id null: the platform) and no token.
ALTER TABLE onceboard.console_sessions ADD CONSTRAINT console_sessions_principal_check CHECK (
  CASE WHEN signed_in_with = 'oidc'
    THEN token_id IS NULL AND oidc_issuer IS NOT NULL AND oidc_subject IS NOT NULL AND actor IS NOT NULL
         AND role = ANY (ARRAY['viewer'::text, 'operator'::text, 'admin'::text])
    ELSE token_id IS NOT NULL AND oidc_subject IS NULL AND role IS NULL AND tenant_id IS NULL AND id_token IS NULL
  END
);
CREATE INDEX console_sessions_oidc_subject_idx ON onceboard.console_sessions (oidc_issuer, oidc_subject)
  WHERE oidc_subject IS NOT NULL;
