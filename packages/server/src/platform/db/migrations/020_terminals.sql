-- Terminals (design §17): programs on a pseudo-terminal in a running computer.
--
-- `holder` is the replica holding the PTY (its instance id): only it writes the terminal's output
-- and ends it. Input, resizes and closes sent through another replica go into `terminal_inbox`,
-- whose inserts wake the holder (NOTIFY svc_terminal_inbox). The output log keeps the last bytes of
-- output for reattach (the holder deletes older events as it appends), then one final `exit`;
-- every append wakes the streams of every replica (NOTIFY svc_terminal_output). A closed terminal is
-- kept an hour (housekeeping of the terminals module). The quotas count open rows under the
-- computer's and the workspace's row locks, in the handler.
CREATE TABLE terminals (
  id            text COLLATE "C" PRIMARY KEY,
  workspace_id  text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  computer_id   text COLLATE "C" NOT NULL,
  state         text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
  cols          integer NOT NULL,
  rows          integer NOT NULL,
  command       jsonb NOT NULL,
  cwd           text,
  holder        text,
  created_by    text COLLATE "C" NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  used_at       timestamptz NOT NULL DEFAULT now(),
  closed_at     timestamptz,
  exit_code     integer,
  end_reason    text
);
CREATE INDEX terminals_computer ON terminals (computer_id, id);
CREATE INDEX terminals_open ON terminals (workspace_id) WHERE state = 'open';

CREATE TABLE terminal_output (
  terminal_id  text COLLATE "C" NOT NULL REFERENCES terminals (id) ON DELETE CASCADE,
  sequence     integer NOT NULL,
  event        text NOT NULL CHECK (event IN ('output', 'exit')),
  data         jsonb NOT NULL,
  bytes        integer NOT NULL DEFAULT 0,
  PRIMARY KEY (terminal_id, sequence)
);

CREATE TABLE terminal_inbox (
  terminal_id  text COLLATE "C" NOT NULL REFERENCES terminals (id) ON DELETE CASCADE,
  sequence     bigserial,
  kind         text NOT NULL CHECK (kind IN ('input', 'resize', 'close')),
  data         bytea,
  cols         integer,
  rows         integer,
  PRIMARY KEY (terminal_id, sequence)
);

CREATE FUNCTION svc_notify_terminal_output() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_terminal_output', NEW.terminal_id);
  RETURN NULL;
END
$$;
CREATE TRIGGER terminal_output_notify AFTER INSERT ON terminal_output
  FOR EACH ROW EXECUTE FUNCTION svc_notify_terminal_output();

CREATE FUNCTION svc_notify_terminal_inbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_terminal_inbox', NEW.terminal_id);
  RETURN NULL;
END
$$;
CREATE TRIGGER terminal_inbox_notify AFTER INSERT ON terminal_inbox
  FOR EACH ROW EXECUTE FUNCTION svc_notify_terminal_inbox();
