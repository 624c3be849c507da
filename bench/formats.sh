#!/usr/bin/env bash
# Output formats side by side on one result (a 600×400 fill of a photo): each request a
# copy of the photo never asked for before, so each is a miss whose time is mostly the
# decode, the resize and the encode; the formats alternate; medians of the request times
# and the sizes, at each format's default quality (WebP 80, AVIF 50, JPEG XL 75).
#
#   bash bench/formats.sh
# Env: N (20 of each), PHOTO (medium.jpg), FORMATS ("webp avif jxl").
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-20}"; PHOTO="${PHOTO:-medium.jpg}"; FORMATS="${FORMATS:-webp avif jxl}"
. bench/lib.sh
bench_start curl
mkdir -p "$out/images"
for f in $FORMATS; do
  for i in $(seq "$N"); do cp "$IMAGES/$PHOTO" "$out/images/$f-$i.jpg"; done
done
cat "$out"/images/* > /dev/null
serve_images 18480
Q="w=600&h=400&mode=fill"
for i in $(seq "$N"); do
  for f in $FORMATS; do
    curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}\n' \
      "http://127.0.0.1:18480/thumb?src=$f-$i.jpg&$Q&format=$f" >> "$out/$f.txt"
  done
done
python3 - "$out" "$N" "$PHOTO" $FORMATS <<'PY'
import statistics, sys
out, n, photo, formats = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
rows = {}
for f in formats:
    lines = [l.split() for l in open(f"{out}/{f}.txt")]
    assert all(l[0] == "200" for l in lines), f"{f}: not every request answered 200"
    rows[f] = (statistics.median(float(l[1]) * 1000 for l in lines), statistics.median(int(l[2]) for l in lines))
print(f"### Output formats: a 600×400 fill of {photo}, {n} misses each, alternating, medians\n")
print("| format | miss, ms | bytes | time / WebP | bytes / WebP |")
print("|---|---:|---:|---:|---:|")
base = rows.get("webp", rows[formats[0]])
for f in formats:
    print(f"| {f} (default quality) | {rows[f][0]:.1f} | {rows[f][1]:.0f} | {rows[f][0] / base[0]:.2f}× | {rows[f][1] / base[1]:.2f}× |")
PY
