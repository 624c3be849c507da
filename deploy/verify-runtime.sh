#!/usr/bin/env bash
# Checks the Dockerfile's runtime stage without a Docker engine: a Debian 12 (bookworm)
# root made by debootstrap, with only the packages the runtime stage installs
# (its RUNTIME_PACKAGES line), the user it makes, the release binary built the way the
# build stage builds it (--static-swift-stdlib) and its ENV. Then, in that root as that
# user: `aspect serve` starts, `aspect healthcheck` (the HEALTHCHECK) answers 0, every
# output format is served with the right magic bytes, the cache is written to the
# volume's folder, and SIGTERM (the STOPSIGNAL) ends it with status 0.
#   sudo bash deploy/verify-runtime.sh        (debootstrap and chroot need root)
# Env: DEBIAN_MIRROR (default: the mirror this machine's apt sources name).
# What it cannot check: the build stage's base image (swift:6.3-bookworm) and the
# image's layering; EXPOSE and VOLUME, which only an engine reads.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "verify-runtime: needs root (debootstrap, chroot)" >&2; exit 1; }
ROOT="$PWD/.build/runtime-root"
PORT="${PORT:-18480}"
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
bash scripts/setup.sh

# The Debian mirror: DEBIAN_MIRROR, else the first one this machine's own apt sources name
# (deb822 .sources files, then one-line .list files), so no host is written here.
mirror_from_apt() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk '/^Types:/ {deb = ($0 ~ /(^|[ \t])deb([ \t]|$)/)} /^URIs:/ && deb {print $2; exit}' "$f" | grep -v security && return
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' "$f" && return
  done
}
MIRROR="${DEBIAN_MIRROR:-$(mirror_from_apt | head -1)}"
[ -n "$MIRROR" ] || { echo "verify-runtime: no Debian mirror in the apt sources; set DEBIAN_MIRROR" >&2; exit 1; }

packages=$(sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' Dockerfile)
[ -n "$packages" ] || { echo "verify-runtime: no RUNTIME_PACKAGES line in the Dockerfile" >&2; exit 1; }
if [ ! -f "$ROOT/.made" ]; then
  rm -rf "$ROOT"
  echo "[runtime] debootstrap bookworm (minbase) into .build/runtime-root" >&2
  debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >/dev/null
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
  echo "[runtime] installing the runtime stage's packages: $packages" >&2
  chroot "$ROOT" apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive chroot "$ROOT" apt-get install -y -qq --no-install-recommends $packages >/dev/null
  chroot "$ROOT" useradd --system --uid 10001 --user-group --home-dir /srv/aspect --create-home aspect
  mkdir -p "$ROOT/var/cache/aspect"
  chroot "$ROOT" chown aspect:aspect /var/cache/aspect
  touch "$ROOT/.made"
fi

# A container has /proc (Swift reads its arguments there, libvips its CPU count).
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; umount "$ROOT/proc" 2>/dev/null || true; }
trap cleanup EXIT

echo "[runtime] building the release binary as the build stage does" >&2
swift build -c release --product aspect --static-swift-stdlib --scratch-path .build/static >/dev/null
install -D .build/static/release/aspect "$ROOT/usr/local/bin/aspect"
rm -rf "$ROOT/srv/aspect/images" "$ROOT/var/cache/aspect/"*
chroot "$ROOT" /usr/local/bin/aspect samples /srv/aspect/images >/dev/null
missing=$(chroot "$ROOT" ldd /usr/local/bin/aspect | grep -c "not found" || true)
[ "$missing" -eq 0 ] || { chroot "$ROOT" ldd /usr/local/bin/aspect | grep "not found" >&2; exit 1; }

# The image's ENV, with the port moved off 8080 for this check.
mapfile -t envs < <(grep -o 'ASPECT_[A-Z_]*=[^ \\]*' Dockerfile | sed "s/^ASPECT_SERVER_PORT=.*/ASPECT_SERVER_PORT=$PORT/")
# As the image runs a command: its user, its WORKDIR, its ENV and nothing else. chroot,
# env and sh each exec the next, so the process started is the command itself.
in_root=(chroot --userspec=aspect:aspect "$ROOT" env -i HOME=/srv/aspect PATH=/usr/local/bin:/usr/bin:/bin "${envs[@]}")
"${in_root[@]}" sh -c 'cd /srv/aspect && exec aspect serve' 2>"$PWD/.build/runtime-serve.log" &
pid=$!
ok=""
for _ in $(seq 100); do
  if "${in_root[@]}" sh -c 'cd /srv/aspect && exec aspect healthcheck' 2>/dev/null; then ok=1; break; fi
  sleep 0.1
done
[ -n "$ok" ] || { echo "FAIL: aspect healthcheck never answered 0" >&2; cat .build/runtime-serve.log >&2; exit 1; }
echo "ok   aspect healthcheck (the HEALTHCHECK) answers 0"
uid=$(awk '/^Uid:/{print $2}' "/proc/$pid/status")
[ "$uid" = 10001 ] || { echo "FAIL: the service runs as uid $uid, not the image's user 10001" >&2; exit 1; }
echo "ok   the service runs as the image's non-root user (uid $uid)"
curl -sf "http://127.0.0.1:$PORT/readyz" | grep -qx ready || { echo "FAIL: /readyz is not 'ready'" >&2; exit 1; }
echo "ok   /readyz: ready (images and cache usable)"
for f in jpeg:ffd8ff png:89504e47 webp:52494646 avif:0000; do
  format=${f%%:*} magic=${f#*:}
  got=$(curl -sf "http://127.0.0.1:$PORT/thumb?src=landscape.jpg&w=200&ratio=4:3&mode=fill&format=$format" | head -c 12 | od -An -tx1 | tr -d ' \n')
  case "$format" in
    avif) [[ "$got" == *66747970617669* ]] || { echo "FAIL: format=avif gave $got" >&2; exit 1; } ;;
    *) [[ "$got" == "$magic"* ]] || { echo "FAIL: format=$format gave $got" >&2; exit 1; } ;;
  esac
  echo "ok   format=$format served ($got)"
done
files=$(find "$ROOT/var/cache/aspect" -type f -user 10001 | wc -l)
[ "$files" -ge 4 ] || { echo "FAIL: $files cache files in the volume's folder" >&2; exit 1; }
echo "ok   $files cache entries written to /var/cache/aspect (the VOLUME), owned by the image's user"
kill -TERM "$pid"
status=0; wait "$pid" || status=$?
pid=""
[ "$status" -eq 0 ] || { echo "FAIL: SIGTERM ended the service with status $status" >&2; exit 1; }
echo "ok   SIGTERM (the STOPSIGNAL) drains and exits 0"
echo "runtime stage verified: packages '$packages', $(du -sxh --exclude=proc "$ROOT" 2>/dev/null | cut -f1) root, binary $(du -h "$ROOT/usr/local/bin/aspect" | cut -f1)"
