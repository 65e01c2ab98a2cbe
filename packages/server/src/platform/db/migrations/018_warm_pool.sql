-- The Docker driver's warm pool (design §4.3): ready containers that a create claims instead of making
-- a new one. A row is written before its container is made (state `creating`), so a replica that dies
-- half-way leaves a row to find, never a container nobody knows; `ready` once the container runs;
-- `claimed` by exactly one computer (the claim is one UPDATE … FOR UPDATE SKIP LOCKED). A claimed row
-- stays while the container lives: it is the proof that the renamed container is that computer's.
CREATE TABLE warm_containers (
  -- `svc-<instance>-pool-<id>`: the container's name while it waits in the pool.
  name text PRIMARY KEY,
  instance text NOT NULL,
  image text NOT NULL,
  size text NOT NULL,
  state text NOT NULL CHECK (state IN ('creating', 'ready', 'claimed')),
  -- The Engine's id of the container, once made.
  container_id text,
  computer_id text UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((state = 'claimed') = (computer_id IS NOT NULL)),
  CHECK (state = 'creating' OR container_id IS NOT NULL)
);

CREATE INDEX warm_containers_ready ON warm_containers (instance, image, size, created_at)
  WHERE state = 'ready';
