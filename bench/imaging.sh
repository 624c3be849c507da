#!/usr/bin/env bash
# Imaging benchmark: in-process thumbnails per second for a photo → 300×225 fill, JPEG
# q80, Aspect's pipeline (aspect-bench) beside libvips' own floor (the team's
# ../shared/peers/floor.py: pyvips thumbnail + jpegsave in process) and the vipsthumbnail
# CLI, in one run. Rounds alternate Aspect and pyvips; the table gives medians.
#
#   bash bench/imaging.sh [PHOTO]      (default: the largest photo, big.jpg)
# Env: ROUNDS (5), N (50 thumbnails a round), THREADS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; N="${N:-50}"; THREADS="${THREADS:-2}"
PEERS=../shared/peers
photos=../shared/images
[ -f "$photos/big.jpg" ] || { bash scripts/fetch-photos.sh; photos=.build/photos; }
PHOTO="${1:-$photos/big.jpg}"

bash scripts/setup.sh
. "$PEERS/common.sh"
need_apt libvips-tools hyperfine
need_venv "$OPT/pyvips" "pyvips==$PYVIPS_VERSION"
swift build -c release --product aspect-bench >/dev/null

out=$(mktemp -d)
for r in $(seq "$ROUNDS"); do
  .build/release/aspect-bench throughput "$PHOTO" --iterations "$N" --threads "$THREADS" >> "$out/aspect.tsv"
  FLOOR_N="$N" "$OPT/pyvips/bin/python" "$PEERS/floor.py" "$PHOTO" >> "$out/pyvips.tsv"
done
hyperfine -N --warmup 3 --runs 30 --export-json "$out/cli.json" \
  "vipsthumbnail $PHOTO -s 300x225 -m centre -o $out/cli.jpg[Q=80,strip]" >/dev/null 2>&1
python3 - "$out" "$PHOTO" "$ROUNDS" "$N" "$THREADS" <<'PY'
import json, statistics, sys
out, photo, rounds, n, threads = sys.argv[1:]
def cols(path):
    rows = [l.split("\t") for l in open(path).read().split("\n") if l]
    return [statistics.median(float(r[i]) for r in rows) for i in (1, 2, 3, 4)]
a, p = cols(f"{out}/aspect.tsv"), cols(f"{out}/pyvips.tsv")
cli = json.load(open(f"{out}/cli.json"))["results"][0]
name = photo.rsplit("/", 1)[-1]
print(f"Photo {name}, 300×225 fill (centre), JPEG q80; {rounds} alternating rounds of {n} thumbnails; medians.\n")
print("| pipeline | ms/img, 1 thread | img/s, 1 thread | img/s, %s threads | peak RSS MB |" % threads)
print("|---|---:|---:|---:|---:|")
print(f"| Aspect (aspect-bench, in process) | {a[0]:.1f} | {a[1]:.1f} | {a[2]:.1f} | {a[3]:.0f} |")
print(f"| libvips floor (pyvips, floor.py) | {p[0]:.1f} | {p[1]:.1f} | {p[2]:.1f} | {p[3]:.0f} |")
print(f"| vipsthumbnail CLI (hyperfine, with process start) | {1000*cli['median']:.1f} | – | – | – |")
print(f"\nAspect / floor, time per image: {a[0]/p[0]:.2f}× (goal: at most 1.10×)")
PY
rm -rf "$out"
