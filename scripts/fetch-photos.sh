#!/usr/bin/env bash
# Puts the team's real test photos in .build/photos, taken from the Debian packages they
# ship in (see the team's images/README.md for their licences), or made from them:
#   big.jpg       lomiri-wallpapers-20.04  Kleiber_by_Lukas_Baubkus.jpg  6028×3391
#   medium.jpg    mate-backgrounds         mate/nature/Storm.jpg          1920×1280, camera EXIF
#   alpha.png     desktop-base             plymouth emerald logo          1689×1800 RGBA
#   portrait.jpg  a lossless crop of big.jpg (jpegtran), stored turned a quarter with
#                 EXIF Orientation=6 (exiftool): 3200×2400 stored, 2400×3200 upright
# scripts/test.sh runs every test on this folder, so a clone with nothing beside it
# passes; each file's SHA-256 is checked against the team's copy.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/photos
declare -A SHA=(
  [big.jpg]=6572410c09f4492c74ccadde133565a14c0161617d5917d4c820c66d65a44ba7
  [medium.jpg]=77ca53077831d3237f73393a91fc879158abc046d852941c26e90de336356957
  [alpha.png]=07328a15a7f5f7b279970dbbdcb24702a521952a07d6331fa204ddfa8ed63181
  [portrait.jpg]=cbcad5791f8bff99f092a0ba93b297f754afbd7250464cc88801743527364ac8
)
complete=yes
for f in "${!SHA[@]}"; do [ -f "$out/$f" ] || complete=no; done
[ "$complete" = yes ] && exit 0
bash scripts/setup.sh photos
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
cd ../photos
# The crop's offsets lie on the 16×8 MCU grid, so nothing is decoded again; turned 270°,
# then tagged Orientation=6 so that viewers turn it back upright.
jpegtran -copy all -perfect -crop 2400x3200+1600+184 -outfile crop.tmp big.jpg
jpegtran -copy all -perfect -rotate 270 -outfile portrait.tmp crop.tmp
exiftool -q -overwrite_original -n -Orientation=6 -ExifImageWidth=3200 -ExifImageHeight=2400 portrait.tmp
rm -f crop.tmp
mv portrait.tmp portrait.jpg
for f in "${!SHA[@]}"; do
  got=$(sha256sum "$f" | cut -d' ' -f1)
  [ "$got" = "${SHA[$f]}" ] || echo "[photos] note: $f differs from the team's copy (a package was updated?)" >&2
done
