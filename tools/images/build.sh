#!/usr/bin/env bash
# `pnpm images:build`: builds the default computer images into the local Docker Engine, with no
# registry: each root filesystem is made from Debian packages, packed as a tar and loaded with
# `docker import`. The image catalogue (packages/server/src/db/migrations/) names the reference each
# image is tagged with; GET /images says which of them this host's Engine has.
#
#   svc/busybox:1   Debian's busybox-static, already on this machine (tools/images/busybox.sh).
#   svc/debian:13   Debian 13 (trixie) from the Debian mirror with debootstrap, plus python3, git and
#                   ca-certificates; skipped when an image of the same recipe is there
#                   (tools/images/debian.sh).
#   svc/desktop:13  Debian 13 with a screen (Xvfb, openbox, xdotool, xterm, an editor, fonts), the same
#                   way; skipped likewise (tools/images/desktop.sh). Its first build is the long one
#                   (5 to 11 minutes: the X packages), so it comes last.
#
#   pnpm images:build                   all three, busybox first
#   bash tools/images/build.sh debian   only the ones named (busybox, debian, desktop)
#
# A Debian image that cannot be built (no mirror, no root) fails the command with the reason, after the
# busybox image is built: the catalogue then shows `debian-13` (or `debian-13-desktop`) as unavailable
# on the Docker driver.
set -euo pipefail

here="$(dirname "${BASH_SOURCE[0]}")"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(busybox debian desktop)
for target in "${targets[@]}"; do
  if [ ! -f "$here/$target.sh" ] || [ "$target" = build ]; then
    echo "images:build: unknown image \"$target\" (busybox, debian, desktop)" >&2
    exit 2
  fi
done
for target in "${targets[@]}"; do
  bash "$here/$target.sh"
done
