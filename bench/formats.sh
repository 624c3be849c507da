#!/usr/bin/env bash
# Output formats side by side on one result (a 600×400 fill of a photo): each request a
# copy of the photo never asked for before, so each is a miss whose time is mostly the
# decode, the resize and the encode; the formats alternate; medians of the request times
# and the sizes, at each format's default quality (WebP 80, AVIF 50, JPEG XL 75).
# Then source formats side by side on one output (a 600×400 fill as WebP): the photo as a
# JPEG, the sample SVG (`aspect samples`' badge.svg, drawn from 120×90 units) and the
# sample PDF's first page (420×595 points), and the sample clip's frame at 1 s (H.264,
# 320×240), each a miss, alternating.
#
#   bash bench/formats.sh
# Env: N (20 of each), PHOTO (medium.jpg), FORMATS ("webp avif jxl"), SOURCES ("jpg svg pdf mp4").
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-20}"; PHOTO="${PHOTO:-medium.jpg}"; FORMATS="${FORMATS:-webp avif jxl}"; SOURCES="${SOURCES:-jpg svg pdf mp4}"
. bench/lib.sh
bench_start curl
mkdir -p "$out/images"
for f in $FORMATS; do
  for i in $(seq "$N"); do cp "$IMAGES/$PHOTO" "$out/images/$f-$i.jpg"; done
done
"$BIN" samples "$out/samples" > /dev/null
declare -A sample=(
  [jpg]="$IMAGES/$PHOTO" [svg]="$out/samples/badge.svg" [pdf]="$out/samples/brochure.pdf" [mp4]="$out/samples/clip.mp4"
)
for s in $SOURCES; do
  for i in $(seq "$N"); do cp "${sample[$s]}" "$out/images/src-$i.$s"; done
done
cat "$out"/images/* > /dev/null
serve_images 18480
Q="w=600&h=400&mode=fill"
# miss QUERY FILE: one request's status, time and size, appended to $out/FILE.txt.
miss() {
  curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}\n' "http://127.0.0.1:18480/thumb?$1" \
    >> "$out/$2.txt"
}
for i in $(seq "$N"); do
  for f in $FORMATS; do miss "src=$f-$i.jpg&$Q&format=$f" "$f"; done
done
for i in $(seq "$N"); do
  for s in $SOURCES; do miss "src=src-$i.$s&$Q&format=webp" "source-$s"; done
done
python3 - "$out" "$N" "$PHOTO" "$FORMATS" "$SOURCES" <<'PY'
import statistics, sys
out, n, photo, formats, sources = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(), sys.argv[5].split()
def medians(name):
    lines = [l.split() for l in open(f"{out}/{name}.txt")]
    assert all(l[0] == "200" for l in lines), f"{name}: not every request answered 200"
    return (statistics.median(float(l[1]) * 1000 for l in lines), statistics.median(int(l[2]) for l in lines))
rows = {f: medians(f) for f in formats}
print(f"### Output formats: a 600×400 fill of {photo}, {n} misses each, alternating, medians\n")
print("| format | miss, ms | bytes | time / WebP | bytes / WebP |")
print("|---|---:|---:|---:|---:|")
base = rows.get("webp", rows[formats[0]])
for f in formats:
    print(f"| {f} (default quality) | {rows[f][0]:.1f} | {rows[f][1]:.0f} | {rows[f][0] / base[0]:.2f}× | {rows[f][1] / base[1]:.2f}× |")
if sources:
    names = {"jpg": f"JPEG ({photo})", "svg": "SVG (badge.svg, 120×90 units)",
             "pdf": "PDF page (brochure.pdf p. 1, 420×595 pt)", "mp4": "video frame (clip.mp4 at 1 s, H.264 320×240)"}
    rows = {s: medians(f"source-{s}") for s in sources}
    base = rows.get("jpg", rows[sources[0]])
    print(f"\n### Source formats: a 600×400 fill as WebP, {n} misses each, alternating, medians\n")
    print("| source | miss, ms | bytes | time / JPEG |")
    print("|---|---:|---:|---:|")
    for s in sources:
        print(f"| {names.get(s, s)} | {rows[s][0]:.1f} | {rows[s][1]:.0f} | {rows[s][0] / base[0]:.2f}× |")
PY
