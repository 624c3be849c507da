#!/usr/bin/env bash
# Installs what building and running Aspect needs and is missing: Debian's libvips (with
# pkg-config to find it), libcurl (for HTTP and S3 sources, with the CA certificates),
# libxml2's headers (the SVG sanitiser parses with it), FFmpeg's libraries (video sources) and
# libseccomp (the render workers' sandbox), dlib (the face detector of gravity=face);
# with `test`, also what the tests need: Debian's Chromium, which loads the demo page as a
# browser would, Python's venv, where scripts/test.sh installs moto's S3 server, and the
# tools that make the test photos; with `photos`, only those tools. Safe to run again: it
# installs nothing already there.
#   bash scripts/setup.sh [test|photos]
set -euo pipefail

packages=(
  pkg-config libvips-dev libcurl4-openssl-dev libxml2-dev ca-certificates
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libseccomp-dev libdlib-dev
  liblapack-dev libblas-dev
)
# scripts/fetch-photos.sh makes the rotated portrait with jpegtran and exiftool.
photo_tools=(libjpeg-turbo-progs libimage-exiftool-perl)
# heif-enc (libheif-examples) makes a HEIF with an embedded thumbnail for the tests.
[ "${1:-}" = test ] && packages+=(chromium python3 python3-venv openssl libheif-examples "${photo_tools[@]}")
[ "${1:-}" = photos ] && packages=("${photo_tools[@]}")
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
