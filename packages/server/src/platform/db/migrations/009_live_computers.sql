-- The live-computers quota (design §11) used to count a workspace's computers under a lock on its row
-- taken at the start of every create, so creates in one workspace ran one at a time and the count grew
-- with the workspace. The count is now kept on the workspace: a create adds one with a conditional
-- UPDATE as its last statement (src/repositories/computers.ts `takeComputerSlot`), the worker takes one
-- off when a computer reaches `deleted`. Only that UPDATE locks the row, from there to the commit.
ALTER TABLE workspaces ADD COLUMN live_computers integer NOT NULL DEFAULT 0;

-- The counter is no part of what the principal cache holds: moving it must not announce the workspace
-- (migration 007), or every create would drop the cached memberships of the workspace's members.
DROP TRIGGER workspaces_notify_access ON workspaces;
CREATE TRIGGER workspaces_notify_access
  AFTER UPDATE OF id, name, display_name, created_by, created_at, updated_at OR DELETE ON workspaces
  FOR EACH ROW EXECUTE FUNCTION svc_notify_access();

UPDATE workspaces w
   SET live_computers = (SELECT count(*) FROM computers c WHERE c.workspace_id = w.id AND c.state <> 'deleted');
