-- The read-only catalogues of GET /sizes and GET /images (design §3). Static: seeded here, changed only
-- by a later migration. Ids are fixed so every database (and every replica) answers the same ids.
-- Listed newest first like every list, so the order of the ids below is the order clients see reversed.

CREATE TABLE sizes (
  id           text COLLATE "C" PRIMARY KEY,
  name         text NOT NULL UNIQUE,
  vcpus        integer NOT NULL,
  memory_mib   integer NOT NULL,
  disk_gib     integer NOT NULL,
  description  text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE images (
  id            text COLLATE "C" PRIMARY KEY,
  name          text NOT NULL UNIQUE,
  display_name  text NOT NULL,
  os            text NOT NULL,
  version       text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);

INSERT INTO sizes (id, name, vcpus, memory_mib, disk_gib, description, created_at) VALUES
  ('01kdvdna007adgkpswz258behmq', 'small', 2, 4096, 40, '2 vCPUs, 4 GiB memory, 40 GiB disk', '2026-01-01T00:00:00Z'),
  ('01kdvdnaz8ehmqtx0369cfjnrvy', 'medium', 4, 16384, 80, '4 vCPUs, 16 GiB memory, 80 GiB disk', '2026-01-01T00:00:01Z'),
  ('01kdvdnbygnrvy147adgkpswz25', 'large', 8, 32768, 160, '8 vCPUs, 32 GiB memory, 160 GiB disk', '2026-01-01T00:00:02Z');

INSERT INTO images (id, name, display_name, os, version, created_at) VALUES
  ('01kdvdncxrwz258behmqtx0369c', 'debian-13', 'Debian 13 (trixie)', 'debian', '13', '2026-01-01T00:00:03Z'),
  ('01kdvdndx0369cfjnrvy147adgk', 'ubuntu-2404', 'Ubuntu 24.04 LTS', 'ubuntu', '24.04', '2026-01-01T00:00:04Z');
