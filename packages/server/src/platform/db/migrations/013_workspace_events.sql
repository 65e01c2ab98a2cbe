-- A workspace's durable event log (GET /workspaces/{workspace}/events, design §14): one event per change
-- of a resource of the workspace, written in the transaction of the change by triggers, so every writer
-- records its events alike (handlers, the worker, the reconciler, housekeeping, the account command,
-- other replicas) and no write path can forget one.
--
-- How a change becomes an event:
-- 1. A row trigger on each table notes the change in `workspace_event_changes` (one row per resource and
--    transaction: a request that touches a resource's row twice, or its three tables, notes it once),
--    with a snapshot of the resource in case the row is gone by the commit (a deleted member).
-- 2. A constraint trigger deferred to the COMMIT turns each note into an event: the resource as it
--    stands then (or the snapshot, when it is gone), the next `sequence` of the workspace from its
--    counter row, an id, and `NOTIFY svc_workspace_events, '<workspace id>'`.
-- The counter row is locked from step 2 to the end of the COMMIT only, never across a round trip to
-- the server: concurrent writers of one workspace run side by side until their commits, and commit in
-- the order of their sequences, so a reader never sees a sequence appear below one it has passed.
-- `data` holds the resource's row in the shape the repositories read it (timestamps already RFC 3339
-- in UTC with milliseconds); the server renders it with render.ts on the way out. Never an operation's
-- `result` or `command`, never a secret (the keys table holds none).

-- No foreign key to workspaces: its check would take a share lock on the workspace's row at the
-- commit, under the counter's lock, and a request holding that row (a member's change) waiting for the
-- counter would deadlock with it. Deleting a workspace deletes its log by a trigger instead.
CREATE TABLE workspace_events (
  workspace_id  text COLLATE "C" NOT NULL,
  sequence      bigint NOT NULL,
  id            text COLLATE "C" NOT NULL UNIQUE,
  type          text NOT NULL,
  data          jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, sequence)
);
-- Retention (housekeeping): the oldest first.
CREATE INDEX workspace_events_created ON workspace_events (created_at);

-- The last sequence and id of each workspace's log: taken, one writer at a time, at the commit.
CREATE TABLE workspace_event_counters (
  workspace_id   text COLLATE "C" PRIMARY KEY,
  last_sequence  bigint NOT NULL,
  last_id        text COLLATE "C" NOT NULL
);

-- Changes noted during a transaction, turned into events at its commit (and deleted then). Rows live
-- only inside their transaction, so the table skips the WAL.
CREATE UNLOGGED TABLE workspace_event_changes (
  tx            bigint NOT NULL,
  kind          text NOT NULL,
  resource_id   text COLLATE "C" NOT NULL,
  workspace_id  text COLLATE "C" NOT NULL,
  change        text NOT NULL,
  data          jsonb,
  PRIMARY KEY (tx, kind, resource_id)
);

-- `ts` as RFC 3339 text in UTC with milliseconds, as `Date.prototype.toISOString` writes it (and as
-- src/repositories/computers.ts reads a computer).
CREATE FUNCTION svc_rfc3339(ts timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- A new id (design §1, src/ids.ts): 10 characters of Unix-millisecond time, then 17 random ones, in
-- lowercase Crockford base32. The random part comes from gen_random_uuid (its random bytes only).
CREATE FUNCTION svc_new_id() RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  t bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  bytes bytea := uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid());
  -- Bytes 6 and 8 of a v4 UUID carry its version and variant.
  picks constant int[] := ARRAY[0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18];
  head text := '';
  tail text := '';
  p int;
BEGIN
  FOR i IN 1..10 LOOP
    head := substr(alphabet, (t % 32)::int + 1, 1) || head;
    t := t / 32;
  END LOOP;
  FOREACH p IN ARRAY picks LOOP
    tail := tail || substr(alphabet, (get_byte(bytes, p) & 31) + 1, 1);
  END LOOP;
  RETURN head || tail;
END
$$;

-- The id right after `id` (its last digits counted up by one): an event's id when the clock has not
-- moved past the workspace's last one, so a workspace's ids sort as its sequences do.
CREATE FUNCTION svc_id_after(id text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  result text := id;
  digit int;
BEGIN
  FOR i IN REVERSE length(id)..1 LOOP
    digit := strpos(alphabet, substr(result, i, 1)) - 1;
    IF digit < 31 THEN
      RETURN overlay(result PLACING substr(alphabet, digit + 2, 1) FROM i FOR 1);
    END IF;
    result := overlay(result PLACING '0' FROM i FOR 1);
  END LOOP;
  RAISE EXCEPTION 'id % has no successor', id;
END
$$;

-- A resource as the event log keeps it: its row as the repositories read it (src/render.ts renders
-- it), timestamps as RFC 3339 text; NULL when there is no such resource (any more).
CREATE FUNCTION svc_event_snapshot(kind text, resource_id text) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
BEGIN
  CASE kind
  WHEN 'workspace' THEN
    RETURN (SELECT jsonb_build_object('id', w.id, 'name', w.name, 'display_name', w.display_name,
              'created_by', w.created_by, 'created_at', svc_rfc3339(w.created_at),
              'updated_at', svc_rfc3339(w.updated_at))
              FROM workspaces w WHERE w.id = resource_id);
  WHEN 'computer' THEN
    RETURN (SELECT jsonb_build_object('id', c.id, 'workspace_id', c.workspace_id, 'name', c.name,
              'state', c.state, 'size', c.size, 'image', c.image, 'labels', c.labels,
              'current_operation_id', c.current_operation_id, 'started_at', svc_rfc3339(c.started_at),
              'stopped_at', svc_rfc3339(c.stopped_at), 'created_at', svc_rfc3339(c.created_at),
              'updated_at', svc_rfc3339(c.updated_at))
              FROM computers c WHERE c.id = resource_id);
  WHEN 'operation' THEN
    -- Never `result` (a command's output needs the exec permission) nor `command` (its stdin).
    RETURN (SELECT jsonb_build_object('id', o.id, 'workspace_id', o.workspace_id, 'type', o.type,
              'state', o.state, 'target_type', o.target_type, 'target_id', o.target_id,
              'created_by', o.created_by, 'progress', o.progress, 'error', o.error,
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

-- (Positional parameters: in SQL functions a column of the same name would win over a parameter.)
CREATE FUNCTION svc_member_snapshot(
  id text, workspace_id text, principal_id text, role text, created_at timestamptz, updated_at timestamptz
) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', $1, 'workspace_id', $2, 'principal_id', $3, 'principal_kind', p.kind,
           'role', $4, 'created_at', svc_rfc3339($5), 'updated_at', svc_rfc3339($6))
    FROM principals p WHERE p.id = $3
$$;

CREATE FUNCTION svc_service_account_snapshot(
  id text, workspace_id text, name text, created_at timestamptz, updated_at timestamptz, role text
) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', $1, 'workspace_id', $2, 'name', $3, 'display_name', p.display_name,
           'role', $6, 'created_at', svc_rfc3339($4), 'updated_at', svc_rfc3339($5))
    FROM principals p WHERE p.id = $1
$$;

-- Notes a change of a resource in this transaction. Noted twice, the stronger change stands
-- (deleted > completed > created > updated) and the newer snapshot.
CREATE FUNCTION svc_note_change(kind text, resource_id text, workspace_id text, change text, data jsonb)
RETURNS void LANGUAGE sql VOLATILE AS $$
  INSERT INTO workspace_event_changes AS c (tx, kind, resource_id, workspace_id, change, data)
  VALUES (pg_current_xact_id()::text::bigint, $1, $2, $3, $4, $5)
  ON CONFLICT (tx, kind, resource_id) DO UPDATE
    SET change = CASE WHEN array_position(ARRAY['updated', 'created', 'completed', 'deleted'], EXCLUDED.change)
                         > array_position(ARRAY['updated', 'created', 'completed', 'deleted'], c.change)
                      THEN EXCLUDED.change ELSE c.change END,
        data = coalesce(EXCLUDED.data, c.data)
$$;

-- The row triggers: which resource a row change is, and what kind of change.
CREATE FUNCTION svc_workspace_event_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  owner text;
BEGIN
  CASE TG_TABLE_NAME
  WHEN 'workspaces' THEN
    PERFORM svc_note_change('workspace', NEW.id, NEW.id, 'updated', NULL);
  WHEN 'computers' THEN
    -- A purge of a long-deleted computer (housekeeping) is no change the API shows.
    IF TG_OP = 'INSERT' THEN
      PERFORM svc_note_change('computer', NEW.id, NEW.workspace_id, 'created', NULL);
    ELSE
      PERFORM svc_note_change('computer', NEW.id, NEW.workspace_id,
        CASE WHEN NEW.state = 'deleted' AND OLD.state <> 'deleted' THEN 'deleted' ELSE 'updated' END, NULL);
    END IF;
  WHEN 'operations' THEN
    IF TG_OP = 'INSERT' THEN
      PERFORM svc_note_change('operation', NEW.id, NEW.workspace_id, 'created', NULL);
    ELSE
      PERFORM svc_note_change('operation', NEW.id, NEW.workspace_id,
        CASE WHEN NEW.state IN ('succeeded', 'failed', 'canceled') AND OLD.state NOT IN ('succeeded', 'failed', 'canceled')
             THEN 'completed' ELSE 'updated' END, NULL);
    END IF;
  WHEN 'members' THEN
    IF TG_OP = 'DELETE' THEN
      PERFORM svc_note_change('member', OLD.id, OLD.workspace_id, 'deleted',
        svc_member_snapshot(OLD.id, OLD.workspace_id, OLD.principal_id, OLD.role, OLD.created_at, OLD.updated_at));
      -- A service account's own membership is its role: the account changes with it (and when the
      -- account is deleted, this is the last place its role can be read).
      PERFORM svc_note_change('service_account', s.id, s.workspace_id, 'updated',
                svc_service_account_snapshot(s.id, s.workspace_id, s.name, s.created_at, s.updated_at, OLD.role))
         FROM service_accounts s WHERE s.id = OLD.principal_id AND s.workspace_id = OLD.workspace_id;
    ELSE
      PERFORM svc_note_change('member', NEW.id, NEW.workspace_id,
        CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'updated' END, NULL);
      -- Without it the account cannot be read at all: its membership's creation is the account's.
      PERFORM svc_note_change('service_account', s.id, s.workspace_id,
                CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'updated' END, NULL)
         FROM service_accounts s WHERE s.id = NEW.principal_id AND s.workspace_id = NEW.workspace_id;
    END IF;
  WHEN 'service_accounts' THEN
    IF TG_OP = 'DELETE' THEN
      PERFORM svc_note_change('service_account', OLD.id, OLD.workspace_id, 'deleted',
        (SELECT svc_service_account_snapshot(OLD.id, OLD.workspace_id, OLD.name, OLD.created_at, OLD.updated_at, m.role)
           FROM members m WHERE m.workspace_id = OLD.workspace_id AND m.principal_id = OLD.id));
    ELSE
      PERFORM svc_note_change('service_account', NEW.id, NEW.workspace_id,
        CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'updated' END, NULL);
    END IF;
  WHEN 'principals' THEN
    -- A service account's display name lives on its principal.
    PERFORM svc_note_change('service_account', s.id, s.workspace_id, 'updated', NULL)
       FROM service_accounts s WHERE s.id = NEW.id;
  WHEN 'keys' THEN
    IF TG_OP = 'DELETE' THEN
      SELECT s.workspace_id INTO owner FROM service_accounts s WHERE s.id = OLD.principal_id;
      IF owner IS NOT NULL THEN
        PERFORM svc_note_change('key', OLD.id, owner, 'deleted', jsonb_build_object('id', OLD.id,
          'principal_id', OLD.principal_id, 'algorithm', OLD.algorithm, 'public_jwk', OLD.public_jwk,
          'state', OLD.state, 'expires_at', svc_rfc3339(OLD.expires_at),
          'last_used_at', svc_rfc3339(OLD.last_used_at), 'created_at', svc_rfc3339(OLD.created_at),
          'updated_at', svc_rfc3339(OLD.updated_at)));
      END IF;
    ELSE
      SELECT s.workspace_id INTO owner FROM service_accounts s WHERE s.id = NEW.principal_id;
      IF owner IS NOT NULL THEN
        PERFORM svc_note_change('key', NEW.id, owner, CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'updated' END, NULL);
      END IF;
    END IF;
  END CASE;
  RETURN NULL;
END
$$;

-- At the commit: each noted change becomes the workspace's next event.
CREATE FUNCTION svc_workspace_event_commit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  noted workspace_event_changes;
  snapshot jsonb;
  fresh text;
  taken workspace_event_counters;
BEGIN
  DELETE FROM workspace_event_changes
   WHERE tx = NEW.tx AND kind = NEW.kind AND resource_id = NEW.resource_id
  RETURNING * INTO noted;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  -- A workspace deleted in this transaction has taken its log with it (workspaces_event_delete).
  IF NOT EXISTS (SELECT 1 FROM workspaces WHERE id = noted.workspace_id) THEN
    RETURN NULL;
  END IF;
  -- A transaction that writes to several workspaces' logs (deleting a service account that is a
  -- member elsewhere) takes their counters in one order, so that two such never wait in a circle.
  IF EXISTS (SELECT 1 FROM workspace_event_changes WHERE tx = NEW.tx AND workspace_id <> noted.workspace_id) THEN
    INSERT INTO workspace_event_counters (workspace_id, last_sequence, last_id)
    SELECT w.id, 0, '' FROM workspaces w
     WHERE w.id IN (SELECT workspace_id FROM workspace_event_changes WHERE tx = NEW.tx UNION SELECT noted.workspace_id)
     ORDER BY w.id
    ON CONFLICT (workspace_id) DO NOTHING;
    PERFORM 1 FROM workspace_event_counters
      WHERE workspace_id IN (SELECT workspace_id FROM workspace_event_changes WHERE tx = NEW.tx UNION SELECT noted.workspace_id)
      ORDER BY workspace_id FOR UPDATE;
  END IF;
  snapshot := coalesce(svc_event_snapshot(noted.kind, noted.resource_id), noted.data);
  IF snapshot IS NULL THEN
    RETURN NULL;
  END IF;
  fresh := svc_new_id();
  INSERT INTO workspace_event_counters AS c (workspace_id, last_sequence, last_id)
  VALUES (noted.workspace_id, 1, fresh)
  ON CONFLICT (workspace_id) DO UPDATE
    SET last_sequence = c.last_sequence + 1,
        last_id = CASE WHEN EXCLUDED.last_id > c.last_id COLLATE "C" THEN EXCLUDED.last_id
                       ELSE svc_id_after(c.last_id) END
  RETURNING * INTO taken;
  -- The time of the commit, not of the transaction's start (now()): a workspace's events are in order of it.
  INSERT INTO workspace_events (workspace_id, sequence, id, type, data, created_at)
  VALUES (noted.workspace_id, taken.last_sequence, taken.last_id, noted.kind || '.' || noted.change, snapshot,
          clock_timestamp());
  PERFORM pg_notify('svc_workspace_events', noted.workspace_id);
  RETURN NULL;
END
$$;

-- Deleting a workspace deletes its log and counter; nobody can read them any more.
CREATE FUNCTION svc_workspace_log_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM workspace_events WHERE workspace_id = OLD.id;
  DELETE FROM workspace_event_counters WHERE workspace_id = OLD.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER workspaces_event_delete AFTER DELETE ON workspaces FOR EACH ROW
  EXECUTE FUNCTION svc_workspace_log_delete();

CREATE CONSTRAINT TRIGGER workspace_event_changes_commit AFTER INSERT ON workspace_event_changes
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION svc_workspace_event_commit();

-- What the API shows of each row decides whether an UPDATE is a change: the live-computers counter, a
-- lease, a command cleared on start, a key's last use or a principal's sign-in details are none.
CREATE TRIGGER workspaces_event AFTER UPDATE ON workspaces FOR EACH ROW
  WHEN ((OLD.name, OLD.display_name, OLD.updated_at) IS DISTINCT FROM (NEW.name, NEW.display_name, NEW.updated_at))
  EXECUTE FUNCTION svc_workspace_event_row();
CREATE TRIGGER computers_event_insert AFTER INSERT ON computers FOR EACH ROW
  EXECUTE FUNCTION svc_workspace_event_row();
CREATE TRIGGER computers_event_update AFTER UPDATE ON computers FOR EACH ROW
  WHEN ((OLD.name, OLD.state, OLD.size, OLD.image, OLD.labels, OLD.current_operation_id, OLD.started_at,
         OLD.stopped_at, OLD.updated_at)
        IS DISTINCT FROM (NEW.name, NEW.state, NEW.size, NEW.image, NEW.labels, NEW.current_operation_id,
         NEW.started_at, NEW.stopped_at, NEW.updated_at))
  EXECUTE FUNCTION svc_workspace_event_row();
CREATE TRIGGER operations_event_insert AFTER INSERT ON operations FOR EACH ROW
  EXECUTE FUNCTION svc_workspace_event_row();
-- `updated_at` alone is no change here: the worker touches it when it clears a started command's stdin.
CREATE TRIGGER operations_event_update AFTER UPDATE ON operations FOR EACH ROW
  WHEN ((OLD.state, OLD.progress, OLD.error, OLD.started_at, OLD.completed_at)
        IS DISTINCT FROM (NEW.state, NEW.progress, NEW.error, NEW.started_at, NEW.completed_at))
  EXECUTE FUNCTION svc_workspace_event_row();
CREATE TRIGGER members_event_insert_delete AFTER INSERT OR DELETE ON members FOR EACH ROW
  EXECUTE FUNCTION svc_workspace_event_row();
CREATE TRIGGER members_event_update AFTER UPDATE ON members FOR EACH ROW
  WHEN (OLD.* IS DISTINCT FROM NEW.*)
  EXECUTE FUNCTION svc_workspace_event_row();
CREATE TRIGGER service_accounts_event_insert_delete AFTER INSERT OR DELETE ON service_accounts FOR EACH ROW
  EXECUTE FUNCTION svc_workspace_event_row();
CREATE TRIGGER service_accounts_event_update AFTER UPDATE ON service_accounts FOR EACH ROW
  WHEN (OLD.* IS DISTINCT FROM NEW.*)
  EXECUTE FUNCTION svc_workspace_event_row();
CREATE TRIGGER principals_event AFTER UPDATE ON principals FOR EACH ROW
  WHEN (NEW.kind = 'service_account' AND OLD.display_name IS DISTINCT FROM NEW.display_name)
  EXECUTE FUNCTION svc_workspace_event_row();
CREATE TRIGGER keys_event_insert_delete AFTER INSERT OR DELETE ON keys FOR EACH ROW
  EXECUTE FUNCTION svc_workspace_event_row();
-- A key's `last_used_at` moves on every token exchange: using a key is not changing it.
CREATE TRIGGER keys_event_update AFTER UPDATE ON keys FOR EACH ROW
  WHEN ((OLD.principal_id, OLD.algorithm, OLD.public_jwk, OLD.state, OLD.expires_at, OLD.updated_at)
        IS DISTINCT FROM (NEW.principal_id, NEW.algorithm, NEW.public_jwk, NEW.state, NEW.expires_at, NEW.updated_at))
  EXECUTE FUNCTION svc_workspace_event_row();
