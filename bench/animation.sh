#!/usr/bin/env bash
# A 50-frame 480×270 GIF to a 200×200 fill, as WebP and as GIF: Aspect (HTTP misses, each
# a copy never asked for before) against the same work in pyvips in process (every frame
# resized by thumbnail with n=-1 to 356×200, each cropped to its centre 200×200, joined,
# then webpsave/gifsave), in one run, medians; and the server's peak RSS over its idle size.
#
#   bash bench/animation.sh
# Env: N (12 of each).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-12}"
PEERS="$(cd ../shared/peers && pwd)"
bash scripts/setup.sh
. "$PEERS/common.sh"
need_apt libvips42 curl
need_venv "$OPT/pyvips" "pyvips==$PYVIPS_VERSION"
swift build -c release --product aspect >/dev/null
BIN="$PWD/$(swift build -c release --show-bin-path | sed "s|^$PWD/||")/aspect"
out=$(mktemp -d); echo "raw output: $out" >&2
mkdir -p "$out/images"
# The animation: 50 frames of a moving gradient, 80 ms each, made by libvips.
"$OPT/pyvips/bin/python" - "$out/images/anim.gif" <<'PY'
import sys, pyvips
frames = []
for f in range(50):
    x = pyvips.Image.xyz(480, 270)
    r = (x[0] + f * 9) % 256
    g = (x[1] * 255 / 269)
    b = ((x[0] + x[1] + f * 5) % 256)
    frames.append(r.bandjoin([g, b]).cast("uchar"))
strip = pyvips.Image.arrayjoin(frames, across=1).copy(interpretation="srgb")
strip.set_type(pyvips.GValue.gint_type, "page-height", 270)
strip.set_type(pyvips.GValue.array_int_type, "delay", [80] * 50)
strip.set_type(pyvips.GValue.gint_type, "loop", 0)
strip.gifsave(sys.argv[1])
PY
for i in $(seq "$N"); do
  for f in webp gif; do cp "$out/images/anim.gif" "$out/images/$f-$i.gif"; done
done
cat "$out"/images/* > /dev/null
. bench/lib.sh
serve_images 18580
spid=$(pgrep -f "aspect serve --port 18580" | head -1)
idle=$(awk '/VmRSS/{print $2}' "/proc/$spid/status")
for i in $(seq "$N"); do
  for f in webp gif; do
    curl -s -o "$out/out.$f" -w '%{http_code} %{time_total}\n' \
      "http://127.0.0.1:18580/thumb?src=$f-$i.gif&w=200&h=200&mode=fill&format=$f" >> "$out/aspect-$f.txt"
  done
done
peak=$(awk '/VmHWM/{print $2}' "/proc/$spid/status")
"$OPT/pyvips/bin/python" - "$out" "$N" <<'PY' > "$out/pyvips.txt"
import sys, time, pyvips
out, n = sys.argv[1], int(sys.argv[2])
for i in range(1, n + 1):
    for f in ("webp", "gif"):
        t = time.perf_counter()
        # libvips 8.14's thumbnail with crop on n=-1 returns one frame: the same work as
        # Aspect's is every frame resized (size=force), each cropped to the centre, joined.
        im = pyvips.Image.thumbnail(f"{out}/images/{f}-{i}.gif[n=-1]", 356, height=200, size="force")
        ph = im.get("page-height")
        frames = [im.crop(78, k * ph, 200, 200) for k in range(im.height // ph)]
        joined = pyvips.Image.arrayjoin(frames, across=1).copy()
        joined.set_type(pyvips.GValue.gint_type, "page-height", 200)
        joined.set_type(pyvips.GValue.array_int_type, "delay", im.get("delay"))
        joined.set_type(pyvips.GValue.gint_type, "loop", im.get("loop"))
        data = joined.webpsave_buffer(Q=80, strip=True) if f == "webp" else joined.gifsave_buffer()
        print(f, (time.perf_counter() - t) * 1000, len(data))
PY
python3 - "$out" "$idle" "$peak" <<'PY'
import statistics, sys
out, idle, peak = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = []
py = [l.split() for l in open(f"{out}/pyvips.txt")]
print("### A 50-frame 480×270 GIF to a 200×200 fill: Aspect against pyvips, medians\n")
print("| output | Aspect miss, ms | pyvips in process, ms | Aspect / pyvips |")
print("|---|---|---|---|")
for f in ("webp", "gif"):
    a = [l.split() for l in open(f"{out}/aspect-{f}.txt")]
    assert all(l[0] == "200" for l in a), f"{f}: not every request answered 200"
    am = statistics.median(float(l[1]) * 1000 for l in a)
    pm = statistics.median(float(l[1]) for l in py if l[0] == f)
    print(f"| animated {f} | {am:.1f} | {pm:.1f} | {am / pm:.2f}× |")
import os
sizes = {f: next(l[2] for l in py if l[0] == f) for f in ("webp", "gif")}
print(f"\nBytes: Aspect {os.path.getsize(out + '/out.webp')} (webp), {os.path.getsize(out + '/out.gif')} (gif); "
      f"pyvips {sizes['webp']} (webp), {sizes['gif']} (gif).")
print(f"\nThe server's RSS: {idle / 1024:.0f} MiB idle, peak {peak / 1024:.0f} MiB over the run (VmHWM).")
PY
