-- A fleet of Docker Engines (design §4.4, decision 0015): hosts are rows, not configuration, so an
-- operator adds, cordons, drains or removes one (`svc-server hosts …`) while every replica runs.
--
-- Capacity is what the operator allows (a CPU overcommit is a capacity above the cores). What a host
-- holds is not kept in counters: placement locks the host's row (`SELECT … FOR UPDATE`, bounded by
-- the transaction's lock timeout) and counts its live computers by `computers_host`, so the sum can
-- never drift from the computers themselves. A computer holds its size's vCPUs and memory and one of
-- the host's computers from its create until it is deleted, stopped or not: a start never finds its
-- host full.
CREATE TABLE hosts (
  id                   text COLLATE "C" PRIMARY KEY,
  -- The operator's name for it, a DNS label (dock-b-07).
  name                 text NOT NULL UNIQUE,
  -- unix:///var/run/docker.sock, or https://10.0.3.7:2376 (a remote Engine, mutual TLS only).
  engine               text NOT NULL,
  -- A remote Engine's CA and the client certificate it requires; the client key is sealed with
  -- SVC_SECRET_KEY, as every other secret at rest.
  tls_ca_pem           text,
  tls_cert_pem         text,
  tls_key_sealed       text,
  labels               jsonb NOT NULL DEFAULT '{}',
  capacity_vcpus       integer NOT NULL CHECK (capacity_vcpus >= 0),
  capacity_memory_mib  integer NOT NULL CHECK (capacity_memory_mib >= 0),
  capacity_computers   integer NOT NULL CHECK (capacity_computers >= 0),
  -- The operator's word: no new computers or pooled containers land here. A heartbeat never clears it.
  cordoned             boolean NOT NULL DEFAULT false,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  CHECK ((engine LIKE 'unix:///%') OR (engine LIKE 'https://%' AND tls_ca_pem IS NOT NULL
                                       AND tls_cert_pem IS NOT NULL AND tls_key_sealed IS NOT NULL))
);

-- Health is observed, apart from the row placement locks: heartbeats never queue behind a placement.
-- A host whose last heartbeat is older than SVC_HOST_UNHEALTHY_MS is unhealthy: it takes nothing new,
-- and its resting computers show `unknown` until it answers again.
CREATE TABLE host_heartbeats (
  host_id    text COLLATE "C" PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
  seen_at    timestamptz NOT NULL,
  -- The Engine's own ID (GET /info), recorded by the first heartbeat: an address later answered by
  -- another Engine is refused, not adopted.
  engine_id  text NOT NULL
);

-- Where each computer lives; NULL only for the simulated driver (which has no hosts), and for
-- computers of a host an operator removed as lost.
ALTER TABLE computers ADD COLUMN host_id text COLLATE "C" REFERENCES hosts (id);
CREATE INDEX computers_host ON computers (host_id) WHERE deleted_at IS NULL;

-- A pooled container waits on one host; a snapshot's image lives on the host of the computer it was
-- taken from, so a computer made from it is placed there.
ALTER TABLE warm_containers ADD COLUMN host_id text COLLATE "C" REFERENCES hosts (id) ON DELETE CASCADE;
ALTER TABLE snapshots ADD COLUMN host_id text COLLATE "C" REFERENCES hosts (id);

-- `unknown`: the computer's host stopped answering (resting; settled when it answers again).
-- `moving`: a drain is moving the computer's files to another host (no action meanwhile).
ALTER TABLE computers DROP CONSTRAINT computers_state_check;
ALTER TABLE computers ADD CONSTRAINT computers_state_check CHECK (state IN
  ('creating', 'starting', 'running', 'stopping', 'stopped', 'restarting', 'deleting', 'deleted', 'failed',
   'recovering', 'unknown', 'moving'));

-- `drain`: a stop the operator's drain asked for, before the computer moves.
ALTER TABLE operations DROP CONSTRAINT operations_trigger_check;
ALTER TABLE operations ADD CONSTRAINT operations_trigger_check CHECK (trigger IN ('idle_timeout', 'expiry', 'drain'));
