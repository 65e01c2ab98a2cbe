-- Secrets the server itself needs, shared by every replica through the database: e.g. the HMAC key
-- that signs page cursors, so a cursor made by one replica is accepted by another. Created on first
-- use (INSERT … ON CONFLICT DO NOTHING, then read), never rotated in place.
CREATE TABLE server_secrets (
  name        text PRIMARY KEY,
  secret      bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
