-- Console sessions live on the server: the cookie carries a random 256-bit session id, and only its
-- SHA-256 is stored here. A session is good while its row says so (not revoked, not past its
-- absolute expiry, seen within the idle timeout) and its token is still active: logging out revokes
-- the row, so a replayed cookie is refused.
CREATE TABLE onceboard.console_sessions (
  id_hash         text        NOT NULL,
  token_id        uuid        NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_seen_at    timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  revoked_at      timestamptz,
  -- How the session was signed in: with a token's secret, or with a one-time login link.
  signed_in_with  text        NOT NULL,
  client_ip       text,
  CONSTRAINT console_sessions_pkey PRIMARY KEY (id_hash),
  CONSTRAINT console_sessions_token_id_fkey FOREIGN KEY (token_id) REFERENCES onceboard.api_tokens (id) ON DELETE CASCADE,
  CONSTRAINT console_sessions_signed_in_with_check CHECK ((signed_in_with = ANY (ARRAY['token'::text, 'link'::text])))
);
CREATE INDEX console_sessions_token_id_idx ON onceboard.console_sessions (token_id);

-- The store of rate-limiter-flexible's RateLimiterPostgres, shared by every console process; its
-- columns are the ones that library creates itself (it is told the table exists).
CREATE TABLE onceboard.rate_limits (
  key     varchar(255) NOT NULL,
  points  integer      NOT NULL DEFAULT 0,
  expire  bigint,
  CONSTRAINT rate_limits_pkey PRIMARY KEY (key)
);
