-- The v1 schema. One schema for PGlite and PostgreSQL. Ids are 27-char text in byte order
-- (COLLATE "C", design §1) so ORDER BY id is creation order, whatever the database's locale.
-- Times are timestamptz, compared with now() of the database (one clock for all replicas).

CREATE TABLE principals (
  id            text COLLATE "C" PRIMARY KEY,
  kind          text NOT NULL CHECK (kind IN ('user', 'service_account')),
  name          text NOT NULL,
  display_name  text NOT NULL DEFAULT '',
  email         text,
  disabled_at   timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
-- User names are unique service-wide; service-account names are unique in their workspace (below).
CREATE UNIQUE INDEX principals_user_name ON principals (name) WHERE kind = 'user';

-- The embedded sign-in's accounts (design §7). An upstream OIDC provider would not use this table.
CREATE TABLE local_accounts (
  principal_id   text COLLATE "C" PRIMARY KEY REFERENCES principals (id) ON DELETE CASCADE,
  username       text NOT NULL UNIQUE,
  password_hash  text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workspaces (
  id            text COLLATE "C" PRIMARY KEY,
  name          text NOT NULL UNIQUE,
  display_name  text NOT NULL DEFAULT '',
  created_by    text COLLATE "C" NOT NULL REFERENCES principals (id),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
-- Quota "workspaces created per principal" counts these.
CREATE INDEX workspaces_created_by ON workspaces (created_by);

CREATE TABLE members (
  id            text COLLATE "C" PRIMARY KEY,
  workspace_id  text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  principal_id  text COLLATE "C" NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  role          text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin', 'owner')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, principal_id)
);
-- GET /me: a principal's workspaces, read on every request for authorization.
CREATE INDEX members_principal ON members (principal_id, workspace_id);

-- A service account is a principal owned by one workspace; its role there is a row in members.
CREATE TABLE service_accounts (
  id            text COLLATE "C" PRIMARY KEY REFERENCES principals (id) ON DELETE CASCADE,
  workspace_id  text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name          text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name)
);

-- Service-account keys: the public half only. The private key is shown once, at creation.
CREATE TABLE keys (
  id            text COLLATE "C" PRIMARY KEY,
  principal_id  text COLLATE "C" NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  algorithm     text NOT NULL CHECK (algorithm IN ('EdDSA', 'ES256')),
  public_jwk    jsonb NOT NULL,
  state         text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'revoked')),
  expires_at    timestamptz,
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX keys_principal ON keys (principal_id, id);

-- Single use of assertion jti (RFC 7523 §3): scoped to the issuer, kept until the assertion expires.
CREATE TABLE assertion_jtis (
  principal_id  text COLLATE "C" NOT NULL,
  jti           text COLLATE "C" NOT NULL,
  expires_at    timestamptz NOT NULL,
  PRIMARY KEY (principal_id, jti)
);
CREATE INDEX assertion_jtis_expires ON assertion_jtis (expires_at);

-- The server's own access-token signing keys (EdDSA), shared by every replica through the database.
-- At most one is active; retired ones still verify tokens signed before a rotation.
CREATE TABLE server_signing_keys (
  id            text COLLATE "C" PRIMARY KEY,
  algorithm     text NOT NULL CHECK (algorithm = 'EdDSA'),
  public_jwk    jsonb NOT NULL,
  private_jwk   jsonb NOT NULL,
  state         text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'retired')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  retired_at    timestamptz
);
CREATE UNIQUE INDEX server_signing_keys_one_active ON server_signing_keys ((true)) WHERE state = 'active';

-- Browser sign-in (design §7): refresh tokens rotate on every use; presenting a rotated one revokes
-- its whole family (RFC 9700 §4.14). Only a hash of each token is stored.
CREATE TABLE refresh_tokens (
  id            text COLLATE "C" PRIMARY KEY,
  family_id     text COLLATE "C" NOT NULL,
  principal_id  text COLLATE "C" NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  token_hash    text NOT NULL UNIQUE,
  parent_id     text COLLATE "C",
  rotated_at    timestamptz,
  revoked_at    timestamptz,
  expires_at    timestamptz NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

-- PKCE authorization codes (RFC 7636): single use, short-lived, stored hashed.
CREATE TABLE authorization_codes (
  code_hash              text PRIMARY KEY,
  principal_id           text COLLATE "C" NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  redirect_uri           text NOT NULL,
  code_challenge         text NOT NULL,
  code_challenge_method  text NOT NULL CHECK (code_challenge_method = 'S256'),
  expires_at             timestamptz NOT NULL,
  used_at                timestamptz,
  created_at             timestamptz NOT NULL DEFAULT now()
);

-- Idempotency-Key records (design §10). `owner` fences the request that holds an in-flight record:
-- only it may complete the record, so a request that outlived its lock cannot commit a second effect.
CREATE TABLE idempotency_keys (
  principal_id  text COLLATE "C" NOT NULL,
  key           text COLLATE "C" NOT NULL,
  fingerprint   text NOT NULL,
  state         text NOT NULL CHECK (state IN ('in_flight', 'done')),
  owner         text COLLATE "C" NOT NULL,
  locked_until  timestamptz NOT NULL,
  status        integer,
  headers       jsonb,
  body          text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  completed_at  timestamptz,
  PRIMARY KEY (principal_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE computers (
  id                    text COLLATE "C" PRIMARY KEY,
  workspace_id          text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name                  text NOT NULL,
  state                 text NOT NULL CHECK (state IN
                          ('creating', 'starting', 'running', 'stopping', 'stopped', 'restarting', 'deleting', 'deleted', 'failed')),
  size                  text NOT NULL,
  image                 text NOT NULL,
  labels                jsonb NOT NULL DEFAULT '{}'::jsonb,
  current_operation_id  text COLLATE "C",
  started_at            timestamptz,
  stopped_at            timestamptz,
  created_by            text COLLATE "C" NOT NULL,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  deleted_at            timestamptz
);
-- A name is unique among the live computers of a workspace and freed once the computer is deleted.
CREATE UNIQUE INDEX computers_live_name ON computers (workspace_id, name) WHERE deleted_at IS NULL;
-- Lists: keyset on id, newest first, per workspace.
CREATE INDEX computers_workspace ON computers (workspace_id, id);

CREATE TABLE operations (
  id            text COLLATE "C" PRIMARY KEY,
  workspace_id  text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  type          text NOT NULL,
  state         text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'canceled')),
  target_type   text NOT NULL,
  target_id     text COLLATE "C" NOT NULL,
  created_by    text COLLATE "C" NOT NULL,
  progress      integer NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
  error         jsonb,
  claimed_by    text,
  lease_until   timestamptz,
  attempts      integer NOT NULL DEFAULT 0,
  started_at    timestamptz,
  completed_at  timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operations_workspace ON operations (workspace_id, id);
CREATE INDEX operations_target ON operations (target_id, id);
-- The worker's claim query scans only unfinished operations.
CREATE INDEX operations_unfinished ON operations (id) WHERE state IN ('pending', 'running');
