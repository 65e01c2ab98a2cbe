-- Reads of computers (one computer, a list page) are cached per replica (src/repositories/read-cache.ts).
-- Every change to a computer announces its workspace on the channel `svc_computers` when its transaction
-- commits, whoever wrote it: handlers, the worker, housekeeping, the Docker reconciler, other replicas.
-- Each replica's listener drops what it holds of that workspace; a cached read first waits until every
-- notification committed before it has arrived, so it is never older than the database.
-- PostgreSQL folds identical notifications of one transaction into one.

CREATE FUNCTION svc_notify_computers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM pg_notify('svc_computers', NEW.workspace_id);
  ELSE
    PERFORM pg_notify('svc_computers', OLD.workspace_id);
    IF TG_OP = 'UPDATE' AND NEW.workspace_id IS DISTINCT FROM OLD.workspace_id THEN
      PERFORM pg_notify('svc_computers', NEW.workspace_id);
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER computers_notify_change AFTER INSERT OR DELETE ON computers
  FOR EACH ROW EXECUTE FUNCTION svc_notify_computers();
-- An UPDATE that changes nothing (a reconciler's sweep re-asserting a state) announces nothing.
CREATE TRIGGER computers_notify_update AFTER UPDATE ON computers
  FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION svc_notify_computers();
