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

-- The event log shows where a computer came from (migration 015's snapshot, with `snapshot_id`).
CREATE OR REPLACE FUNCTION svc_event_snapshot(kind text, resource_id text) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
BEGIN
  CASE kind
  WHEN 'workspace' THEN
    RETURN (SELECT jsonb_build_object('id', w.id, 'name', w.name, 'display_name', w.display_name,
              'lifetime_defaults', w.lifetime_defaults,
              'created_by', w.created_by, 'created_at', svc_rfc3339(w.created_at),
              'updated_at', svc_rfc3339(w.updated_at))
              FROM workspaces w WHERE w.id = resource_id);
  WHEN 'computer' THEN
    RETURN (SELECT jsonb_build_object('id', c.id, 'workspace_id', c.workspace_id, 'name', c.name,
              'state', c.state, 'size', c.size, 'image', c.image, 'labels', c.labels,
              'current_operation_id', c.current_operation_id, 'started_at', svc_rfc3339(c.started_at),
              'stopped_at', svc_rfc3339(c.stopped_at), 'created_at', svc_rfc3339(c.created_at),
              'updated_at', svc_rfc3339(c.updated_at),
              'idle_timeout_seconds', c.idle_timeout_seconds, 'expires_at', svc_rfc3339(c.expires_at),
              'on_end', c.on_end, 'last_active_at', svc_rfc3339(c.last_active_at),
              'snapshot_id', c.snapshot_id)
              FROM computers c WHERE c.id = resource_id);
  WHEN 'operation' THEN
    -- Never `result` (a command's output needs the exec permission) nor `command` (its stdin).
    RETURN (SELECT jsonb_build_object('id', o.id, 'workspace_id', o.workspace_id, 'type', o.type,
              'state', o.state, 'target_type', o.target_type, 'target_id', o.target_id,
              'created_by', o.created_by, 'trigger', o.trigger, 'progress', o.progress, 'error', o.error,
              'started_at', svc_rfc3339(o.started_at), 'completed_at', svc_rfc3339(o.completed_at),
              'created_at', svc_rfc3339(o.created_at), 'updated_at', svc_rfc3339(o.updated_at))
              FROM operations o WHERE o.id = resource_id);
  WHEN 'member' THEN
    RETURN (SELECT svc_member_snapshot(m.id, m.workspace_id, m.principal_id, m.role, m.created_at, m.updated_at)
              FROM members m WHERE m.id = resource_id);
  WHEN 'service_account' THEN
    RETURN (SELECT svc_service_account_snapshot(s.id, s.workspace_id, s.name, s.created_at, s.updated_at, m.role)
              FROM service_accounts s
              JOIN members m ON m.workspace_id = s.workspace_id AND m.principal_id = s.id
             WHERE s.id = resource_id);
  WHEN 'key' THEN
    RETURN (SELECT jsonb_build_object('id', k.id, 'principal_id', k.principal_id, 'algorithm', k.algorithm,
              'public_jwk', k.public_jwk, 'state', k.state, 'expires_at', svc_rfc3339(k.expires_at),
              'last_used_at', svc_rfc3339(k.last_used_at), 'created_at', svc_rfc3339(k.created_at),
              'updated_at', svc_rfc3339(k.updated_at))
              FROM keys k WHERE k.id = resource_id);
  ELSE
    RAISE EXCEPTION 'no event snapshot for %', kind;
  END CASE;
END
$$;
