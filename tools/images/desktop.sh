#!/usr/bin/env bash
# The desktop computer image, part of `pnpm images:build` (tools/images/build.sh): Debian 13 with a
# screen, bootstrapped from Debian's own packages like svc/debian:13 (tools/images/debian.sh), packed as
# a tar and loaded with `docker import`. No image registry; the only network it needs is the Debian
# mirror. Computers of it still have no network.
#
#   svc/desktop:13  Debian 13 (trixie), minbase plus a virtual screen (Xvfb), a light window manager
#                   (openbox), xdotool (input), xterm, a text editor (xedit, from x11-apps, which also
#                   brings xwd), netpbm (xwd's picture to PNG: the screenshots), ImageMagick and fonts;
#                   a non-root user `svc` (uid 1000) owning /home/svc. Catalogue name
#                   `debian-13-desktop`, `display: true`
#                   (packages/server/src/db/migrations/020_desktops.sql).
#
# The image's command, /usr/local/bin/svc-desktop, starts Xvfb on display :0 at the size in
# SVC_SCREEN (`<width>x<height>`, width 640 to 3840, height 480 to 2160, default 1280x800; the driver
# sets it from the computer's `screen`), then openbox, then sleeps. DISPLAY=:0 is in the image's
# environment, so every command run in the computer reaches the screen. Ctrl+Alt+T opens an xterm.
#
# Content-addressed as debian.sh is: the recipe (this script, the release, the variant, the package
# list) is hashed into the label `svc.recipe` and the tag `svc/desktop:recipe-<hash>`; when the Engine
# already has an image of that recipe, the build is skipped.
#
#   bash tools/images/desktop.sh                 build (or skip) svc/desktop:13
#   bash tools/images/desktop.sh --recipe-hash   print the recipe's hash and build nothing
#
# Environment: SVC_DEBIAN_MIRROR (as debian.sh), SVC_DESKTOP_IMAGE (default svc/desktop:13).
# Needs: root (debootstrap chroots), the docker CLI and a running Engine; installs debootstrap with
# apt-get when it is missing.
set -euo pipefail

release=trixie
version=13
variant=minbase
packages="ca-certificates,xvfb,openbox,xdotool,xterm,x11-apps,netpbm,imagemagick,fonts-dejavu-core,xfonts-base"
tag="${SVC_DESKTOP_IMAGE:-svc/desktop:$version}"
repository="${tag%:*}"
script="${BASH_SOURCE[0]}"

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
  saved="${TMPDIR:-/tmp}/svc-debootstrap-$release-desktop.log"
  cp "$log" "$saved"
  if docker image inspect "$tag" >/dev/null 2>&1; then
    fail "debootstrap could not build the desktop image from $mirror (log: $saved); $tag stays the image of an earlier recipe"
  fi
  fail "debootstrap could not build the desktop image from $mirror (log: $saved); there is no $tag, so the catalogue shows debian-$version-desktop as unavailable on the Docker driver"
fi

debian_version="$(cat "$root/etc/debian_version")"
# (Asked of dpkg: xdotool itself will not start without a display.)
xdotool_version="$(chroot "$root" dpkg-query -W -f '${Version}' xdotool)"
# The screenshot tools the server runs (packages/server/src/desktops/engine.ts).
for tool in xwd xwdtopnm pamscale pnmtopng xdotool; do
  chroot "$root" sh -c "command -v $tool" >/dev/null || fail "the image has no $tool"
done

echo 'svc:x:1000:1000:svc:/home/svc:/bin/bash' >>"$root/etc/passwd"
echo 'svc:x:1000:' >>"$root/etc/group"
echo 'svc:!:20000:0:99999:7:::' >>"$root/etc/shadow"
mkdir -p "$root/home/svc"
cp -a "$root/etc/skel/." "$root/home/svc/"
# xterm in a scalable font large enough to read back (no xrdb: Xt reads ~/.Xdefaults itself).
printf '%s\n' 'XTerm*faceName: DejaVu Sans Mono' 'XTerm*faceSize: 14' 'XTerm*saveLines: 1000' \
  >"$root/home/svc/.Xdefaults"
chmod 0755 "$root/home/svc"
echo "$release-desktop" >"$root/etc/hostname"

# The root filesystem is read-only in a computer: the X server compiles its keymap into /tmp (a tmpfs).
rm -rf "$root/var/lib/xkb" && ln -s /tmp "$root/var/lib/xkb"
# Ctrl+Alt+T opens a terminal, as on most desktops.
sed -i 's|<keyboard>|<keyboard>\n    <keybind key="C-A-t"><action name="Execute"><command>xterm</command></action></keybind>|' \
  "$root/etc/xdg/openbox/rc.xml"
grep -q 'C-A-t' "$root/etc/xdg/openbox/rc.xml" || fail "could not add the terminal key binding to openbox's rc.xml"

cat >"$root/usr/local/bin/svc-desktop" <<'ENTRY'
#!/bin/sh
# The desktop image's command: a virtual screen of SVC_SCREEN (<width>x<height>, width 640-3840,
# height 480-2160, default 1280x800) on display :0, a window manager, then nothing more to do.
set -eu
screen="${SVC_SCREEN:-1280x800}"
width="${screen%x*}"
height="${screen#*x}"
case "$width$height" in *[!0-9]* | "") echo "svc-desktop: SVC_SCREEN=$screen is not <width>x<height>" >&2; exit 2 ;; esac
if [ "$width" -lt 640 ] || [ "$width" -gt 3840 ] || [ "$height" -lt 480 ] || [ "$height" -gt 2160 ]; then
  echo "svc-desktop: SVC_SCREEN=$screen is outside 640x480 to 3840x2160" >&2
  exit 2
fi
Xvfb :0 -screen 0 "${width}x${height}x24" -nolisten tcp -dpi 96 -nocursor >/tmp/xvfb.log 2>&1 &
# Wait for the screen (at most 5 s) before the window manager connects to it. As a user other than
# root, Xvfb listens on the abstract socket only (no /tmp/.X11-unix), so ask the screen itself.
for _ in $(seq 100); do
  xdotool getdisplaygeometry >/dev/null 2>&1 && break
  sleep 0.05
done
openbox >/tmp/openbox.log 2>&1 &
exec sleep infinity
ENTRY
chmod 0755 "$root/usr/local/bin/svc-desktop"

rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
  "$root"/var/log/* "$root"/debootstrap "$root"/dev/* "$root"/proc/* "$root"/sys/* "$root"/run/* \
  "$root"/usr/share/doc/* "$root"/usr/share/man/*
rm -rf "$root/tmp" && mkdir -m 1777 "$root/tmp"
find "$root" -xdev -type f -perm /6000 -exec chmod ug-s {} +

pack=(--numeric-owner --sort=name --mtime=@0)
tar "${pack[@]}" --exclude=./home/svc -C "$root" -cf "$work/root.tar" .
tar "${pack[@]}" --owner=1000 --group=1000 -C "$root" -rf "$work/root.tar" ./home/svc
docker import \
  --change 'USER 1000:1000' \
  --change 'WORKDIR /home/svc' \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin HOME=/home/svc LANG=C.UTF-8 DISPLAY=:0' \
  --change 'CMD ["/usr/local/bin/svc-desktop"]' \
  --change "LABEL svc.image=desktop svc.release=$release svc.version=$version svc.recipe=$recipe svc.debian_version=$debian_version svc.xdotool_version=$xdotool_version svc.display=true" \
  --message "built by tools/images/desktop.sh: debootstrap --variant=$variant --include=$packages $release" \
  "$work/root.tar" "$recipe_tag" >/dev/null
docker tag "$recipe_tag" "$tag"
say "$tag (Debian $debian_version, xdotool $xdotool_version; recipe ${recipe:0:16}) in $((SECONDS - started)) s"
