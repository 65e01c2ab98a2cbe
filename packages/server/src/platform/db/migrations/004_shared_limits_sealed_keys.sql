-- Counters of the rate limits and sign-in throttles, shared by every replica (rate-limiter-flexible's
-- RateLimiterPostgres layout: one row per policy and key, an atomic upsert per request). PGlite keeps
-- its counters in memory (one process); the table exists on both engines so the schema is one.
CREATE TABLE rate_limits (
  key     varchar(255) PRIMARY KEY,
  points  integer NOT NULL DEFAULT 0,
  expire  bigint
);
CREATE INDEX rate_limits_expire ON rate_limits (expire);

-- Signing keys are sealed at rest: the private JWK is a JWE (dir + A256GCM) under the server's secret
-- key, which lives outside the database (SVC_SECRET_KEY or a 0600 key file). The server moves
-- plaintext keys of older versions into `private_jwe` on start and clears `private_jwk`.
ALTER TABLE server_signing_keys ADD COLUMN private_jwe text;
ALTER TABLE server_signing_keys ALTER COLUMN private_jwk DROP NOT NULL;
