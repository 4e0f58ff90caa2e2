-- What the console shows and revokes a session by. The cookie's secret is never stored and its
-- SHA-256 (id_hash, the primary key) is as good as the cookie to anyone who can present it to this
-- table, so neither may leave the server: the admin page and GET /api/v1/sessions name a session by
-- this random id instead, which grants nothing.
ALTER TABLE onceboard.console_sessions ADD COLUMN public_id uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX console_sessions_public_id_key ON onceboard.console_sessions (public_id);
