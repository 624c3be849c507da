#!/usr/bin/env bash
# JPEG shrink-on-load, `images.fastShrinkOnLoad` true (the default) against false
# (libvips' own rule), in one run:
#   1. fidelity: each JPEG photo thumbnailed by `aspect thumb` to 150, 300, 400 and 600 px wide
#      (PNG, so no encoder loss), compared by PSNR with a reference made the slow way:
#      the whole image decoded, turned upright, and resized to the same size by libvips'
#      lanczos3. For scale, the PSNR that encoding the reference as JPEG q80 costs, and
#      whether libvips' own thumbnail gives the same pixels as Aspect with the key off;
#   2. time: Aspect's pipeline in process (aspect-bench, 1 thread), big.jpg → 300×225 fill,
#      JPEG q80, the two settings in alternating rounds, medians.
#   bash bench/shrink-on-load.sh
# Env: ROUNDS (5), N (30 thumbnails a round).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; N="${N:-30}"
PEERS=../shared/peers
photos=../shared/images
[ -f "$photos/big.jpg" ] || { bash scripts/fetch-photos.sh; photos=.build/photos; }

bash scripts/setup.sh
. "$PEERS/common.sh"
need_venv "$OPT/pyvips" "pyvips==$PYVIPS_VERSION"
swift build -c release --product aspect >/dev/null
swift build -c release --product aspect-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for photo in big medium portrait; do
  for w in 150 300 400 600; do
    for fast in true false; do
      ASPECT_IMAGES_FASTSHRINKONLOAD=$fast "$bin/aspect" thumb "$photos/$photo.jpg" "$out/$photo-$w-$fast.png" --w "$w"
    done
  done
done
for r in $(seq "$ROUNDS"); do
  for fast in true false; do
    "$bin/aspect-bench" throughput "$photos/big.jpg" --iterations "$N" --threads 1 --fast-shrink-on-load "$fast" \
      >> "$out/time-$fast.tsv"
  done
done

"$OPT/pyvips/bin/python" - "$out" "$photos" "$ROUNDS" "$N" <<'PY'
import math, statistics, sys
import pyvips
pyvips.cache_set_max(0)
out, photos, rounds, n = sys.argv[1:]

def db(v):
    return "identical" if v == math.inf else f"{v:.1f} dB"

def psnr(a, b):
    d = (a.cast("float") - b.cast("float"))
    mse = (d * d).avg()
    return math.inf if mse == 0 else 10 * math.log10(255 * 255 / mse)

print("Fidelity: PSNR against the whole image decoded and resized by lanczos3 (higher is closer).\n")
print("| photo | width | shrink-on-load fast (default) | libvips' rule | libvips thumbnail = libvips' rule? | JPEG q80 of the reference |")
print("|---|---:|---:|---:|:---:|---:|")
for photo in ("big", "medium", "portrait"):
    whole = pyvips.Image.new_from_file(f"{photos}/{photo}.jpg", fail=True).autorot()
    for w in (150, 300, 400, 600):
        fast = pyvips.Image.new_from_file(f"{out}/{photo}-{w}-true.png")
        slow = pyvips.Image.new_from_file(f"{out}/{photo}-{w}-false.png")
        ref = whole.resize(fast.width / whole.width, vscale=fast.height / whole.height)
        lib = pyvips.Image.thumbnail(f"{photos}/{photo}.jpg", fast.width, height=fast.height, size="force")
        q80 = pyvips.Image.new_from_buffer(ref.jpegsave_buffer(Q=80), "")
        same = "yes" if psnr(lib, slow) == math.inf else f"no ({psnr(lib, slow):.1f} dB)"
        print(f"| {photo}.jpg {whole.width}×{whole.height} | {fast.width}×{fast.height} | {db(psnr(fast, ref))} "
              f"| {db(psnr(slow, ref))} | {same} | {db(psnr(q80, ref))} |")

def col(path, i):
    return statistics.median(float(l.split("\t")[i]) for l in open(path) if l.strip())
t_fast, t_slow = col(f"{out}/time-true.tsv", 1), col(f"{out}/time-false.tsv", 1)
print(f"\nTime: big.jpg → 300×225 fill, JPEG q80, in process, 1 thread; {rounds} alternating rounds of {n}; medians.\n")
print("| images.fastShrinkOnLoad | ms per thumbnail |")
print("|---|---:|")
print(f"| true (default) | {t_fast:.1f} |")
print(f"| false | {t_slow:.1f} |")
print(f"\nfalse / true: {t_slow / t_fast:.2f}× the time")
PY
