-- Keyset pages (design §6: newest first, `id < cursor`) read an index in order and stop after the
-- page, whatever the size of the workspace. Computers and operations had theirs from the start;
-- members and service accounts are listed per workspace by id too.
CREATE INDEX members_workspace ON members (workspace_id, id);
CREATE INDEX service_accounts_workspace ON service_accounts (workspace_id, id);
