-- Screens and input (design §18). An image says whether its computers have a display; a computer of
-- such an image has a screen of the size chosen at create (both null for any other computer; the
-- server gives a display computer 1280x800 when its create names no size). The desktop image is built
-- by `pnpm images:build` (tools/images/desktop.sh) and tagged svc/desktop:13.
ALTER TABLE images ADD COLUMN display boolean NOT NULL DEFAULT false;

INSERT INTO images (id, name, display_name, os, version, reference, display, created_at) VALUES
  ('01kdvdng1dsktp0000000000000', 'debian-13-desktop', 'Debian 13 desktop', 'debian', '13', 'svc/desktop:13', true, '2026-01-01T00:00:06Z');

ALTER TABLE computers
  ADD COLUMN screen_width integer,
  ADD COLUMN screen_height integer;
