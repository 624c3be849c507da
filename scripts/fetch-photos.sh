#!/usr/bin/env bash
# Puts the team's real test photos in .build/photos, when ../shared/images is not beside
# the checkout (CI on a fresh machine): the same files, taken from the Debian packages
# they ship in (see ../shared/images/README.md for their licences).
#   big.jpg     lomiri-wallpapers-20.04  Kleiber_by_Lukas_Baubkus.jpg  6028×3391
#   medium.jpg  mate-backgrounds         mate/nature/Storm.jpg          1920×1280, camera EXIF
#   alpha.png   desktop-base             plymouth emerald logo          1689×1800 RGBA
# The tests make the EXIF-rotated portrait from big.jpg themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/photos
[ -f "$out/big.jpg" ] && [ -f "$out/medium.jpg" ] && [ -f "$out/alpha.png" ] && exit 0
mkdir -p "$out" .build/debs
cd .build/debs
fetch() {  # package path-inside name
  local pkg="$1" inside="$2" name="$3"
  if ! ls "${pkg}"_*.deb >/dev/null 2>&1; then
    apt-get download "$pkg" >/dev/null 2>&1 || { apt-get update -qq && apt-get download "$pkg" >/dev/null; }
  fi
  rm -rf "x-$pkg" && mkdir "x-$pkg"
  dpkg-deb -x "$(ls "${pkg}"_*.deb | head -1)" "x-$pkg"
  cp "x-$pkg/$inside" "../photos/$name"
  rm -rf "x-$pkg"
}
echo "[photos] fetching the test photos from Debian packages" >&2
fetch lomiri-wallpapers-20.04 usr/share/backgrounds/Kleiber_by_Lukas_Baubkus.jpg big.jpg
fetch mate-backgrounds usr/share/backgrounds/mate/nature/Storm.jpg medium.jpg
fetch desktop-base usr/share/plymouth/themes/emerald/logo+emerald.png alpha.png
