-- The event log's snapshot of a resource is no longer written here: the server makes it from the
-- resource's wire shape (src/computers/render.ts) and installs it after the migrations, whenever it
-- changed (src/computers/repositories/event-snapshot.ts): `svc_event_snapshot(kind, id)` and one
-- function per kind, `svc_event_data_<kind>(row …)`, which the row triggers call with the row that is
-- going away.
--
-- Migration 013's row triggers, with the rows of a deleted member, service account or key handed to
-- those functions instead of copies of their fields: which resource a row change is, and what kind
-- of change.
CREATE OR REPLACE FUNCTION svc_workspace_event_row() RETURNS trigger LANGUAGE plpgsql AS $$
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
        svc_event_data_member(OLD));
      -- A service account's own membership is its role: the account changes with it (and when the
      -- account is deleted, this is the last place its role can be read).
      PERFORM svc_note_change('service_account', s.id, s.workspace_id, 'updated',
                svc_event_data_service_account(s, OLD))
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
        (SELECT svc_event_data_service_account(OLD, m)
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
        PERFORM svc_note_change('key', OLD.id, owner, 'deleted', svc_event_data_key(OLD));
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

-- Their last callers are gone; `svc_event_snapshot` comes back, from the wire shapes, as the server
-- installs them (a server that did not would fail each event instead of recording it short).
DROP FUNCTION svc_member_snapshot(text, text, text, text, timestamptz, timestamptz);
DROP FUNCTION svc_service_account_snapshot(text, text, text, timestamptz, timestamptz, text);
DROP FUNCTION svc_event_snapshot(text, text);
