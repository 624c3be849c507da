#!/usr/bin/env bash
# Installs what building and running Aspect needs and is missing: Debian's libvips (with
# pkg-config to find it); with `test`, also what the tests need: Debian's Chromium, which
# loads the demo page as a browser would. Safe to run again: it installs nothing already there.
#   bash scripts/setup.sh [test]
set -euo pipefail

packages=(pkg-config libvips-dev)
[ "${1:-}" = test ] && packages+=(chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "[setup] installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "[setup] the Swift toolchain is not on PATH" >&2; exit 1; }
