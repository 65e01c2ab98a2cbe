-- Snapshots (design §4.2): a computer's files copied into an image of its workspace, and computers
-- created from one.
--
-- A snapshot does not depend on its computer (no foreign key on `computer_id`): the computer may be
-- deleted, and purged, while the snapshot lives on. It goes with its workspace (ON DELETE CASCADE);
-- the handler that deletes a workspace removes the snapshots' images from the engine first.
-- `operation_id` is the `computer.snapshot` operation that makes it: the worker finds the snapshot
-- of an operation by it. The quota (SVC_QUOTA_SNAPSHOTS_PER_WORKSPACE) counts rows under the
-- workspace's row lock, in the handler.
CREATE TABLE snapshots (
  id            text COLLATE "C" PRIMARY KEY,
  workspace_id  text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name          text NOT NULL,
  description   text,
  state         text NOT NULL DEFAULT 'creating' CHECK (state IN ('creating', 'ready', 'failed')),
  computer_id   text COLLATE "C" NOT NULL,
  image         text NOT NULL,
  size_bytes    bigint,
  operation_id  text COLLATE "C" NOT NULL UNIQUE,
  created_by    text COLLATE "C" NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name)
);
CREATE INDEX snapshots_workspace ON snapshots (workspace_id, id);

-- A computer created from a snapshot names it; no foreign key: deleting the snapshot leaves the
-- computer (and its files) as it is.
ALTER TABLE computers ADD COLUMN snapshot_id text COLLATE "C";
