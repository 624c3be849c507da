#!/usr/bin/env bash
# AVIF against WebP for one 600×400 fill result (http.autoAvif's cost), in one run: each
# request a copy of the photo never asked for before, so each is a miss; the two formats
# alternate; medians of the request times and the sizes.
#
#   bash bench/avif.sh
# Env: N (20 of each), PHOTO (medium.jpg).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-20}"; PHOTO="${PHOTO:-medium.jpg}"
PEERS="$(cd ../shared/peers && pwd)"
bash scripts/setup.sh
. "$PEERS/common.sh"
need_apt curl
[ -f "$IMAGES/$PHOTO" ] || "$PEERS/make-corpus.sh" >/dev/null
swift build -c release --product aspect >/dev/null
BIN="$PWD/$(swift build -c release --show-bin-path | sed "s|^$PWD/||")/aspect"
out=$(mktemp -d); echo "raw output: $out" >&2
mkdir -p "$out/images"
for i in $(seq "$N"); do cp "$IMAGES/$PHOTO" "$out/images/a-$i.jpg"; cp "$IMAGES/$PHOTO" "$out/images/w-$i.jpg"; done
cat "$out"/images/* > /dev/null
. bench/lib.sh
serve_images 18480
Q="w=600&h=400&mode=fill"
for i in $(seq "$N"); do
  curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}\n' \
    "http://127.0.0.1:18480/thumb?src=a-$i.jpg&$Q&format=avif" >> "$out/avif.txt"
  curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}\n' \
    "http://127.0.0.1:18480/thumb?src=w-$i.jpg&$Q&format=webp" >> "$out/webp.txt"
done
python3 - "$out" "$N" "$PHOTO" <<'PY'
import statistics, sys
out, n, photo = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = {}
for f in ("avif", "webp"):
    lines = [l.split() for l in open(f"{out}/{f}.txt")]
    assert all(l[0] == "200" for l in lines), f"{f}: not every request answered 200"
    rows[f] = (statistics.median(float(l[1]) * 1000 for l in lines), statistics.median(int(l[2]) for l in lines))
print(f"### AVIF against WebP: a 600×400 fill of {photo}, {n} misses each, alternating, medians\n")
print("| format | miss, ms | bytes |")
print("|---|---|---|")
for f in ("webp", "avif"):
    print(f"| {f} (default quality) | {rows[f][0]:.1f} | {rows[f][1]:.0f} |")
print(f"\nAVIF / WebP: {rows['avif'][0] / rows['webp'][0]:.2f}× the time, {rows['avif'][1] / rows['webp'][1]:.2f}× the bytes")
PY
