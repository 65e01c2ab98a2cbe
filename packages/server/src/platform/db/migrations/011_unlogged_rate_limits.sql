-- The rate-limit and sign-in counters are written on every request (an upsert per request and policy).
-- As a logged table each of those writes waited for a WAL flush at its commit, so with rate limits on
-- a read served from memory still cost a disk flush (`pnpm bench --rate-limits …`: GET a computer
-- 1,743/s on PostgreSQL against 11,025/s with limits off). The counters are only worth a window of
-- seconds to minutes: an unlogged table skips the WAL. After a crash of PostgreSQL it comes back empty
-- (every budget starts afresh once), and it is not copied to standbys (a failover does the same).
ALTER TABLE rate_limits SET UNLOGGED;
