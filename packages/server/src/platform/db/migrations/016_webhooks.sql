-- Webhooks (design "Webhooks"): a workspace's endpoints, the deliveries of its event log's events to
-- them, and every attempt.
--
-- An endpoint follows the workspace's event log with a cursor of its own (`queued_through`: the last
-- sequence it has queued up to, set to the log's last sequence when it is made), so it receives the
-- events after its creation. Every replica's dispatcher moves it on: one delivery per (endpoint, event),
-- queued and the cursor advanced in one transaction under the endpoint's row lock, and the unique key
-- makes a second queueing a no-op, so each event is queued exactly once.
--
-- CHECKs hold the spec's enums only (test/spec-drift.test.ts compares them); the pairing of a status
-- with its fields (`disabled_reason` exactly when disabled…) is kept by the repositories' updates.
--
-- Secrets are sealed (AES-256-GCM, a key derived from the server's secret key, outside the database):
-- a reader of the database alone cannot sign a delivery. No foreign key from the event log: events are
-- copied into the delivery (`payload`, the JSON the receiver gets), so retention of the log never
-- takes a pending delivery's body away.
CREATE TABLE webhook_endpoints (
  id                  text COLLATE "C" PRIMARY KEY,
  workspace_id        text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  url                 text NOT NULL,
  description         text,
  event_types         text[] NOT NULL,
  status              text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'failing', 'disabled')),
  disabled_reason     text CHECK (disabled_reason IN ('requested', 'failing')),
  failing_since       timestamptz,
  secret_sealed       bytea NOT NULL,
  previous_sealed     bytea,
  secret_expires_at   timestamptz,
  queued_through      bigint NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id, id);

CREATE TABLE webhook_deliveries (
  id               text COLLATE "C" PRIMARY KEY,
  endpoint_id      text COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id         text COLLATE "C" NOT NULL,
  -- NULL for a sample event (`POST …/test`), which is in no log.
  event_sequence   bigint,
  event_type       text NOT NULL,
  -- The event as JSON text, exactly the bytes POSTed (and signed).
  payload          text NOT NULL,
  test             boolean NOT NULL DEFAULT false,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt_count    integer NOT NULL DEFAULT 0,
  -- Failed attempts of the current round (a redelivery starts a new one): the retry schedule's index.
  round_failures   integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,
  lease_owner      text,
  lease_until      timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, event_id)
);
-- The worker's look for due work; the listing (newest first); retention.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);

CREATE TABLE webhook_attempts (
  delivery_id  text COLLATE "C" NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  number       integer NOT NULL,
  started_at   timestamptz NOT NULL,
  duration_ms  integer NOT NULL,
  outcome      text NOT NULL
    CHECK (outcome IN ('succeeded', 'http_error', 'timeout', 'connection_error', 'refused_address')),
  status_code  integer,
  -- At most 500 characters (the code cuts it), never the receiver's answer body.
  error        text,
  PRIMARY KEY (delivery_id, number)
);
