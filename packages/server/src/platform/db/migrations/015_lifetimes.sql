-- Computer lifetimes and recovery (design §4.1): an idle timeout, an expiry and what ending means on
-- each computer; a workspace's defaults for new computers; the trigger of an operation the service
-- started by itself; the transient state `recovering`.

ALTER TABLE computers DROP CONSTRAINT computers_state_check;
ALTER TABLE computers ADD CONSTRAINT computers_state_check CHECK (state IN
  ('creating', 'starting', 'running', 'stopping', 'stopped', 'restarting', 'deleting', 'deleted', 'failed',
   'recovering'));

-- Bounds (60 s..30 days, an expiry ≤ 30 days ahead) are the handlers' to check: they answer
-- field_violations, a CHECK could not.
ALTER TABLE computers
  ADD COLUMN idle_timeout_seconds integer,
  ADD COLUMN expires_at timestamptz,
  ADD COLUMN on_end text NOT NULL DEFAULT 'stop' CHECK (on_end IN ('stop', 'delete')),
  -- Touched at most once per 30 s per computer (src/repositories/lifetimes.ts); no event (below).
  ADD COLUMN last_active_at timestamptz NOT NULL DEFAULT now();

-- `{idle_timeout_seconds?, max_lifetime_seconds?, on_end?}` as the API shows it; NULL when none.
ALTER TABLE workspaces ADD COLUMN lifetime_defaults jsonb;

ALTER TABLE operations ADD COLUMN trigger text CHECK (trigger IN ('idle_timeout', 'expiry'));

-- The lifetime check's two scans (src/repositories/lifetimes.ts): computers that can expire, and
-- running computers with an idle timeout, oldest activity first.
CREATE INDEX computers_expiring ON computers (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX computers_idle ON computers (last_active_at)
  WHERE idle_timeout_seconds IS NOT NULL AND state = 'running';

-- The event log shows the new fields (migration 013's snapshot, with them).
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
              'on_end', c.on_end, 'last_active_at', svc_rfc3339(c.last_active_at))
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

-- A lifetime change is a change of the computer; activity (`last_active_at`, touched as commands run
-- and streams open) is none: it would write an event per computer every 30 s of use. The event of a
-- computer's next real change carries it.
DROP TRIGGER computers_event_update ON computers;
CREATE TRIGGER computers_event_update AFTER UPDATE ON computers FOR EACH ROW
  WHEN ((OLD.name, OLD.state, OLD.size, OLD.image, OLD.labels, OLD.current_operation_id, OLD.started_at,
         OLD.stopped_at, OLD.updated_at, OLD.idle_timeout_seconds, OLD.expires_at, OLD.on_end)
        IS DISTINCT FROM (NEW.name, NEW.state, NEW.size, NEW.image, NEW.labels, NEW.current_operation_id,
         NEW.started_at, NEW.stopped_at, NEW.updated_at, NEW.idle_timeout_seconds, NEW.expires_at, NEW.on_end))
  EXECUTE FUNCTION svc_workspace_event_row();
DROP TRIGGER workspaces_event ON workspaces;
CREATE TRIGGER workspaces_event AFTER UPDATE ON workspaces FOR EACH ROW
  WHEN ((OLD.name, OLD.display_name, OLD.updated_at, OLD.lifetime_defaults)
        IS DISTINCT FROM (NEW.name, NEW.display_name, NEW.updated_at, NEW.lifetime_defaults))
  EXECUTE FUNCTION svc_workspace_event_row();
