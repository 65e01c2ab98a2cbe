-- The replicas that hold terminals, each with when it last said it was alive (design §17). A replica
-- that ended without closing its terminals (killed, its machine gone) stops saying so; after a while
-- any other replica ends them (`server_stopped`), so their readers get their end and the quotas free
-- their places. A holder that never wrote a row here (a replica of an earlier version, during a
-- rolling deploy) is never judged gone.
CREATE TABLE terminal_holders (
  holder   text COLLATE "C" PRIMARY KEY,
  seen_at  timestamptz NOT NULL DEFAULT now()
);
