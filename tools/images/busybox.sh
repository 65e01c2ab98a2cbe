#!/usr/bin/env bash
# The minimal computer image, part of `pnpm images:build` (tools/images/build.sh): a root filesystem
# assembled from a Debian package already on this machine, packed as a tar and loaded with
# `docker import`. The image catalogue (packages/server/src/db/migrations/) names its reference.
#
#   svc/busybox:1   Debian's busybox-static: /bin/busybox and a symlink per applet, a non-root user
#                   `svc` (uid 1000) owning /home/svc, an empty /tmp (the driver mounts a tmpfs there).
#
# Needs: the docker CLI and a running Engine; busybox-static (`apt-get install busybox-static`).
set -euo pipefail

busybox="${SVC_BUSYBOX:-/bin/busybox}"
tag="${SVC_BUSYBOX_IMAGE:-svc/busybox:1}"

if ! command -v docker >/dev/null 2>&1; then
  echo "images:build: the docker CLI is missing (apt-get install docker.io)" >&2
  exit 1
fi
if ! docker info >/dev/null 2>&1; then
  echo "images:build: the Docker Engine is not reachable (is dockerd running? DOCKER_HOST=${DOCKER_HOST:-unset})" >&2
  exit 1
fi
if [ ! -x "$busybox" ] || ! "$busybox" --list-full >/dev/null 2>&1; then
  echo "images:build: $busybox is not a static busybox (apt-get install busybox-static)" >&2
  exit 1
fi
if ldd "$busybox" >/dev/null 2>&1; then
  echo "images:build: $busybox is dynamically linked; the image has no libc, so it needs busybox-static" >&2
  exit 1
fi

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,home/svc,root,proc,sys,dev}
cp "$busybox" "$root/bin/busybox"
chmod 0755 "$root/bin/busybox"
# One symlink per applet, where busybox says it belongs (bin/sh, usr/bin/env, …).
while IFS= read -r applet; do
  [ "$applet" = "bin/busybox" ] && continue
  mkdir -p "$root/$(dirname "$applet")"
  ln -sf /bin/busybox "$root/$applet"
done < <("$busybox" --list-full)
cat > "$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
svc:x:1000:1000:svc:/home/svc:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
cat > "$root/etc/group" <<'GROUP'
root:x:0:
svc:x:1000:
nogroup:x:65534:
GROUP
chmod 1777 "$root/tmp"
# sed reads the whole banner: `head` would close the pipe early, and busybox's SIGPIPE fails the
# pipeline under pipefail (exit 141).
version="$("$busybox" 2>&1 | sed -n '1s/^BusyBox v\([0-9.]*\).*/\1/p')"

# Everything belongs to root but the home of `svc`: computers run as `svc` on a read-only root, writing
# to /tmp (a tmpfs) and /home (a volume the driver mounts, seeded from the image), so /home/svc is left
# out of the first pass and appended owned by 1000:1000 (the Engine refuses duplicate entries). Sorted
# names and one fixed mtime keep the archive's content the same from run to run.
pack=(--numeric-owner --sort=name --mtime=@0)
tar "${pack[@]}" --owner=0 --group=0 --exclude=./home/svc -C "$root" -cf "$root.tar" .
tar "${pack[@]}" --owner=1000 --group=1000 --no-recursion -C "$root" -rf "$root.tar" ./home/svc
docker import \
  --change 'USER 1000:1000' \
  --change 'WORKDIR /home/svc' \
  --change 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/home/svc' \
  --change 'CMD ["/bin/sleep", "infinity"]' \
  --change "LABEL svc.image=busybox svc.busybox_version=${version:-unknown}" \
  --message "built by tools/images/build.sh from $busybox" \
  "$root.tar" "$tag" >/dev/null
rm -f "$root.tar"
echo "images:build: $tag (BusyBox ${version:-unknown}, $("$busybox" --list-full | wc -l) applets)"
