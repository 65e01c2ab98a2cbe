-- A command's output log (GET /operations/{operation}/output, design §14): the chunks a
-- `computer.exec` operation's command wrote, in order, then one final event (`exit` or `failed`),
-- numbered from 1 per operation. The worker appends chunks as the command writes them (batched, fenced
-- by its claim) and the final event in the transaction that ends the operation. `data` is the event's
-- JSON as the API sends it (the spec's OutputChunk, CommandExit or Error). Kept 24 hours after the
-- operation ended (housekeeping).

CREATE TABLE operation_output (
  operation_id  text COLLATE "C" NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
  sequence      integer NOT NULL,
  event         text NOT NULL CHECK (event IN ('output', 'exit', 'failed')),
  data          jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (operation_id, sequence)
);

-- Every append announces its operation on `svc_operation_output` when its transaction commits (the
-- streams of every replica read on from where they are). PostgreSQL folds identical notifications of
-- one transaction into one.
CREATE FUNCTION svc_notify_operation_output() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_operation_output', NEW.operation_id);
  RETURN NULL;
END
$$;

CREATE TRIGGER operation_output_notify AFTER INSERT ON operation_output
  FOR EACH ROW EXECUTE FUNCTION svc_notify_operation_output();
