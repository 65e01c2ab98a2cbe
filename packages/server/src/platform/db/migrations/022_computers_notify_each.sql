-- A change to a computer now names the computer too, on a channel of its own:
-- `NOTIFY svc_computer_changes, '<workspace id> <computer id>'`. Each replica's read cache drops only what
-- that computer's change can touch (its own row, the list pages whose id range holds it), so a workspace
-- that changes all the time keeps serving the rest. `svc_computers, '<workspace id>'` is still sent, for
-- replicas of an earlier version while a deploy rolls (a later migration may stop it).

CREATE OR REPLACE FUNCTION svc_notify_computers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM pg_notify('svc_computers', NEW.workspace_id);
    PERFORM pg_notify('svc_computer_changes', NEW.workspace_id || ' ' || NEW.id);
  ELSE
    PERFORM pg_notify('svc_computers', OLD.workspace_id);
    PERFORM pg_notify('svc_computer_changes', OLD.workspace_id || ' ' || OLD.id);
    IF TG_OP = 'UPDATE' AND NEW.workspace_id IS DISTINCT FROM OLD.workspace_id THEN
      PERFORM pg_notify('svc_computers', NEW.workspace_id);
      PERFORM pg_notify('svc_computer_changes', NEW.workspace_id || ' ' || NEW.id);
    END IF;
  END IF;
  RETURN NULL;
END
$$;
