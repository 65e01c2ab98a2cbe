-- A computer that leaves `running` (it stops, restarts, moves or is deleted) ends its open terminals
-- (`computer_stopped`, design §17): the replica holding each one's PTY hears it on this channel, as
-- soon as the change commits, before the driver stops the container under the program.
CREATE FUNCTION svc_notify_terminal_computer() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_terminal_computer', NEW.id);
  RETURN NULL;
END
$$;
CREATE TRIGGER computers_terminal_notify AFTER UPDATE OF state ON computers
  FOR EACH ROW WHEN (OLD.state = 'running' AND NEW.state <> 'running')
  EXECUTE FUNCTION svc_notify_terminal_computer();
