-- Who a principal is and what it may do is cached per replica for at most a second
-- (src/auth/principal-cache.ts). Every change that could alter a cached answer announces itself on
-- the channel `svc_access` when its transaction commits, naming only what changed: `p:<principal id>`
-- (the principal, its keys, its memberships) or `w:<workspace id>` (a workspace's name or row).
-- Triggers catch every writer alike: handlers, the account command, housekeeping, other replicas.
-- PostgreSQL folds identical notifications of one transaction into one.

CREATE FUNCTION svc_notify_access() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  row_data record;
BEGIN
  IF TG_OP = 'DELETE' THEN row_data := OLD; ELSE row_data := NEW; END IF;
  IF TG_TABLE_NAME = 'principals' OR TG_TABLE_NAME = 'service_accounts' THEN
    PERFORM pg_notify('svc_access', 'p:' || row_data.id);
  ELSIF TG_TABLE_NAME = 'workspaces' THEN
    PERFORM pg_notify('svc_access', 'w:' || row_data.id);
  ELSE
    -- members and keys: the principal they belong to (a member's old principal too, if it moved).
    PERFORM pg_notify('svc_access', 'p:' || row_data.principal_id);
    IF TG_OP = 'UPDATE' AND OLD.principal_id IS DISTINCT FROM NEW.principal_id THEN
      PERFORM pg_notify('svc_access', 'p:' || OLD.principal_id);
    END IF;
  END IF;
  RETURN NULL;
END
$$;

-- A key's `last_used_at` changes on every token exchange: only what decides whether it is usable counts.
CREATE TRIGGER keys_notify_access AFTER UPDATE OF state, expires_at, principal_id OR DELETE ON keys
  FOR EACH ROW EXECUTE FUNCTION svc_notify_access();
CREATE TRIGGER principals_notify_access AFTER UPDATE OR DELETE ON principals
  FOR EACH ROW EXECUTE FUNCTION svc_notify_access();
CREATE TRIGGER service_accounts_notify_access AFTER UPDATE OR DELETE ON service_accounts
  FOR EACH ROW EXECUTE FUNCTION svc_notify_access();
CREATE TRIGGER members_notify_access AFTER INSERT OR UPDATE OR DELETE ON members
  FOR EACH ROW EXECUTE FUNCTION svc_notify_access();
CREATE TRIGGER workspaces_notify_access AFTER UPDATE OR DELETE ON workspaces
  FOR EACH ROW EXECUTE FUNCTION svc_notify_access();
