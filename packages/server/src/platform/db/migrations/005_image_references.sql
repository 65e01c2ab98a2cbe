-- The container image behind each catalogue image (the Docker driver, src/operations/docker/). GET
-- /images does not show it: it is where this deployment finds the image, not part of the contract.
-- `svc/…` references are local tags built by `pnpm images:build` (tools/images/build.sh); production
-- points them at its registry with a migration of its own (see the server README, "Images").
ALTER TABLE images ADD COLUMN reference text;

UPDATE images SET reference = 'svc/debian:13' WHERE name = 'debian-13';
UPDATE images SET reference = 'svc/ubuntu:24.04' WHERE name = 'ubuntu-2404';

-- The minimal image every machine can build without a registry: Debian's busybox-static.
INSERT INTO images (id, name, display_name, os, version, reference, created_at) VALUES
  ('01kdvdnewz258behmqtx0369cfj', 'busybox', 'BusyBox 1.35 (minimal)', 'busybox', '1.35', 'svc/busybox:1', '2026-01-01T00:00:05Z');
