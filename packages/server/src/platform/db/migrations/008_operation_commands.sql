-- `computer.exec` operations (POST …/computers/{computer}/run, design §13). `command` holds the
-- request (argv, stdin, timeout, output cap) only until the worker starts it, so stdin is not kept at
-- rest; `result` holds what the command returned, shown as the operation's `result.execution`.
ALTER TABLE operations ADD COLUMN command jsonb;
ALTER TABLE operations ADD COLUMN result jsonb;
