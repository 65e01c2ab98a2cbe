-- A create takes its place in the live-computers quota (migration 009) as its transaction's last
-- statement, and that statement locks the workspace's row until the commit. On PostgreSQL it is sent
-- in one message with the COMMIT (`Queryable.commitWith`, src/db/database.ts), so the lock is held for
-- the UPDATE and the commit only, not across a round trip to the server and back. Such a statement
-- has no parameters and cannot hand a row count back to decide with, hence this function: it refuses
-- a full quota itself, with an error code of its own that the server answers as 403 `quota_exceeded`
-- (src/repositories/computers.ts `takeComputerPlace`). PostgreSQL skips the COMMIT after the error and
-- the whole transaction rolls back: the computer, its operation and the Idempotency-Key's record.
CREATE FUNCTION svc_take_computer_place(target_workspace text, quota integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE workspaces SET live_computers = live_computers + 1
   WHERE id = target_workspace AND live_computers < quota;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'workspace % has no place left for a computer', target_workspace
      USING ERRCODE = 'P0Q01';
  END IF;
END
$$;
