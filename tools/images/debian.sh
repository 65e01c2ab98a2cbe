#!/usr/bin/env bash
# The Debian computer image, part of `pnpm images:build` (tools/images/build.sh): a root filesystem
# bootstrapped from Debian's own packages (`debootstrap --variant=minbase`), packed as a tar and loaded
# with `docker import`. No image registry is involved; the only network it needs is the Debian mirror.
#
#   svc/debian:13   Debian 13 (trixie), minbase plus python3, git and ca-certificates; a non-root
#                   user `svc` (uid 1000) owning /home/svc, an empty /tmp (the driver mounts a tmpfs
#                   there). Catalogue name `debian-13` (packages/server/src/db/migrations/).
#
# Content-addressed: the recipe (this script, the release, the variant and the package list; not the
# mirror) is hashed into the label `svc.recipe` and the tag `svc/debian:recipe-<hash>`. When the Engine
# already has an image of that recipe, the build is skipped. The hash names the recipe, not the bytes:
# a rebuild of the same recipe a month later would fetch newer package versions, so it is not redone.
#
#   bash tools/images/debian.sh                 build (or skip) svc/debian:13
#   bash tools/images/debian.sh --recipe-hash   print the recipe's hash and build nothing
#
# Environment: SVC_DEBIAN_MIRROR (default: the first Debian archive in /etc/apt/sources.list*, else
# http://deb.debian.org/debian), SVC_DEBIAN_PACKAGES (default python3,git,ca-certificates),
# SVC_DEBIAN_IMAGE (default svc/debian:13).
# Needs: root (debootstrap chroots), the docker CLI and a running Engine; installs debootstrap with
# apt-get when it is missing.
set -euo pipefail

release=trixie
version=13
variant=minbase
packages="${SVC_DEBIAN_PACKAGES:-python3,git,ca-certificates}"
tag="${SVC_DEBIAN_IMAGE:-svc/debian:$version}"
repository="${tag%:*}"
script="${BASH_SOURCE[0]}"

# The recipe: everything that decides what the image holds, and nothing that only decides where it is
# fetched from. The architecture is part of it: an amd64 image is not an arm64 one.
arch="$(dpkg --print-architecture 2>/dev/null || uname -m)"
recipe="$(
  {
    printf 'release=%s\nvariant=%s\npackages=%s\narch=%s\n' "$release" "$variant" "$packages" "$arch"
    cat "$script"
  } | sha256sum | cut -c1-64
)"
if [ "${1:-}" = "--recipe-hash" ]; then
  echo "$recipe"
  exit 0
fi

say() { echo "images:build: $*"; }
fail() {
  echo "images:build: $*" >&2
  exit 1
}

command -v docker >/dev/null 2>&1 || fail "the docker CLI is missing (apt-get install docker.io)"
docker info >/dev/null 2>&1 ||
  fail "the Docker Engine is not reachable (is dockerd running? DOCKER_HOST=${DOCKER_HOST:-unset})"

recipe_tag="$repository:recipe-${recipe:0:16}"
built="$(docker image inspect --format '{{index .Config.Labels "svc.recipe"}}' "$recipe_tag" 2>/dev/null || true)"
if [ "$built" = "$recipe" ]; then
  docker tag "$recipe_tag" "$tag"
  say "$tag is up to date (recipe ${recipe:0:16}, $(docker image inspect --format '{{index .Config.Labels "svc.debian_version"}}' "$tag")); build skipped"
  exit 0
fi

[ "$(id -u)" = 0 ] || fail "building $tag needs root (debootstrap chroots into the new root filesystem)"
if ! command -v debootstrap >/dev/null 2>&1; then
  say "installing debootstrap with apt-get"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }; then
    fail "debootstrap is missing and apt-get could not install it"
  fi
fi

# The mirror apt already uses (deb822 `URIs:` or one-line `deb` entries), the Debian archive only.
mirror="${SVC_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror="$(
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
      grep -v '^[[:space:]]*#' | grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v security | head -n 1 | tr -d ' ' || true
  )"
  mirror="${mirror:-http://deb.debian.org/debian}"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/root"
log="$work/debootstrap.log"
started=$SECONDS
say "bootstrapping Debian $version ($release, $variant, + $packages) from $mirror"
if ! debootstrap --variant="$variant" --include="$packages" --components=main \
  "$release" "$root" "$mirror" >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  saved="${TMPDIR:-/tmp}/svc-debootstrap-$release.log"
  cp "$log" "$saved"
  if docker image inspect "$tag" >/dev/null 2>&1; then
    fail "debootstrap could not build Debian $release from $mirror (log: $saved); $tag stays the image of an earlier recipe"
  fi
  fail "debootstrap could not build Debian $release from $mirror (log: $saved); there is no $tag, so the catalogue shows debian-$version as unavailable on the Docker driver"
fi

# What the image holds, asked of the new root itself (before its /dev is emptied below).
debian_version="$(cat "$root/etc/debian_version")"
python_version="$(chroot "$root" python3 -c 'import platform; print(platform.python_version())')"
git_version="$(chroot "$root" git --version | sed 's/^git version //')"

# The user computers run as, the same layout as svc/busybox:1: uid and gid 1000, home /home/svc.
echo 'svc:x:1000:1000:svc:/home/svc:/bin/bash' >>"$root/etc/passwd"
echo 'svc:x:1000:' >>"$root/etc/group"
echo 'svc:!:20000:0:99999:7:::' >>"$root/etc/shadow"
mkdir -p "$root/home/svc"
cp -a "$root/etc/skel/." "$root/home/svc/"
chmod 0755 "$root/home/svc"
echo "$release" >"$root/etc/hostname"
# What only the build needed: package lists, caches, logs, device nodes (the Engine brings its own /dev).
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
  "$root"/var/log/* "$root"/debootstrap "$root"/dev/* "$root"/proc/* "$root"/sys/* "$root"/run/*
rm -rf "$root/tmp" && mkdir -m 1777 "$root/tmp"
# No set-user-ID or set-group-ID programs (su, mount, passwd, …): computers never change user, and the
# driver's no-new-privileges would refuse them anyway (SECURITY.md, "Driver").
find "$root" -xdev -type f -perm /6000 -exec chmod ug-s {} +

# As for busybox: everything belongs to root but /home/svc, appended owned by 1000:1000.
pack=(--numeric-owner --sort=name --mtime=@0)
tar "${pack[@]}" --exclude=./home/svc -C "$root" -cf "$work/root.tar" .
tar "${pack[@]}" --owner=1000 --group=1000 -C "$root" -rf "$work/root.tar" ./home/svc
docker import \
  --change 'USER 1000:1000' \
  --change 'WORKDIR /home/svc' \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin HOME=/home/svc LANG=C.UTF-8' \
  --change 'CMD ["/bin/sleep", "infinity"]' \
  --change "LABEL svc.image=debian svc.release=$release svc.version=$version svc.recipe=$recipe svc.debian_version=$debian_version svc.python_version=$python_version svc.git_version=$git_version" \
  --message "built by tools/images/debian.sh: debootstrap --variant=$variant --include=$packages $release" \
  "$work/root.tar" "$recipe_tag" >/dev/null
docker tag "$recipe_tag" "$tag"
say "$tag (Debian $debian_version, Python $python_version, git $git_version; recipe ${recipe:0:16}) in $((SECONDS - started)) s"
