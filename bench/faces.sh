#!/usr/bin/env bash
# gravity=face beside gravity=smart (issue 39), in one run:
# 1. The detector on the test photographs with faces (scripts/fetch-faces.sh): faces found,
#    how many match a box marked by hand (IoU >= 0.5), false ones, and the median ms of an
#    in-process describe with faces and without (aspect-bench faces, 20 each).
# 2. Misses: the service with its result cache off, a 300×300 fill of medium.jpg (1920×1280,
#    no face: the detector runs, then smart's cut) and of zidane.jpg (1280×720, two faces),
#    gravity=face and gravity=smart, wrk -t1 -c2, rounds alternating, medians; and the
#    face misses again on a service with faces.upsample=false (issue 50: what the second
#    look on a copy twice as large costs a picture with no face).
# 3. Hits: the same four URLs cached, wrk -t1 -c8, rounds alternating, medians.
#
#   bash bench/faces.sh
# Env: ROUNDS (5), DURATION (10s).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; DURATION="${DURATION:-10s}"
. bench/lib.sh
bench_start wrk curl
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done' EXIT
venv=.build/test-venv
[ -x "$venv/bin/pip" ] || { venv="$out/venv"; python3 -m venv "$venv"; }
bash scripts/fetch-faces.sh "$venv/bin/pip"
swift build -c release --product aspect-bench >/dev/null
BENCH="$(dirname "$BIN")/aspect-bench"
FACES=.build/photos/faces

echo "### gravity=face beside gravity=smart (issue 39)"
echo
echo "The detector (dlib's frontal face detector on a copy at most 640 px long), in process:"
echo
for f in astronaut.png grace_hopper.jpg grace_hopper-turned.jpg zidane.jpg coffee.png; do
  echo "$f $("$BENCH" faces "$FACES/$f")"
done > "$out/faces.txt"
python3 - "$out/faces.txt" <<'PY'
import json, re, sys
# Boxes marked by hand (fractions of the upright picture), as in Tests/ImagingTests/FaceTests.swift.
marked = {
    "astronaut.png": [(0.348, 0.156, 0.180, 0.191)],
    "grace_hopper.jpg": [(0.316, 0.277, 0.379, 0.267)],
    "grace_hopper-turned.jpg": [(0.316, 0.277, 0.379, 0.267)],
    "zidane.jpg": [(0.708, 0.156, 0.122, 0.217), (0.398, 0.417, 0.122, 0.208)],
    "coffee.png": [],
}
def iou(a, b):
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]); h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0: return 0
    return w * h / (a[2] * a[3] + b[2] * b[3] - w * h)
print("| photo | faces marked | found | matched (IoU ≥ 0.5) | missed | false | describe with faces | without | the detection |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for line in open(sys.argv[1]):
    name, rest = line.split(" ", 1)
    found = [(f["x"], f["y"], f["w"], f["h"]) for f in json.loads(re.search(r"faces=(\[.*?\])", rest).group(1))]
    with_ms = float(re.search(r"ms_with=([\d.]+)", rest).group(1)); without = float(re.search(r"ms_without=([\d.]+)", rest).group(1))
    m = marked[name]
    matched = sum(1 for b in m if any(iou(b, f) >= 0.5 for f in found))
    false = sum(1 for f in found if not any(iou(b, f) >= 0.5 for b in m))
    print(f"| {name} | {len(m)} | {len(found)} | {matched} | {len(m) - matched} | {false} | {with_ms:.1f} ms | {without:.1f} ms | {with_ms - without:.1f} ms |")
PY
echo

mkdir -p "$out/images"
cp "$IMAGES/medium.jpg" "$FACES/zidane.jpg" "$out/images/"
start() {  # name port cache-bytes [upsample]
  ASPECT_LOG_ACCESS=false ASPECT_CACHE_MAXBYTES="$3" ASPECT_FACES_UPSAMPLE="${4:-true}" setsid "$BIN" serve --port "$2" --images "$out/images" \
    --cache-dir "$out/cache-$1" >/dev/null 2>"$out/aspect-$1.log" &
  pids+=($!)
  wait_http "http://127.0.0.1:$2/healthz" 30
}
start misses 18410 0
start hits 18411 1GiB
start once 18412 0 false
urls=()
for src in medium.jpg zidane.jpg; do
  for g in smart face; do urls+=("$src $g|/thumb?src=$src&w=300&h=300&mode=fill&format=jpeg&gravity=$g"); done
  urls+=("$src face, faces.upsample=false|/thumb?src=$src&w=300&h=300&mode=fill&format=jpeg&gravity=face")
done
missport() { case "$1" in *upsample=false*) echo 18412 ;; *) echo 18410 ;; esac; }
for u in "${urls[@]}"; do
  for port in $(missport "$u") 18411; do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port${u#*|}")" = 200 ] || { echo "${u#*|} failed" >&2; exit 1; }
  done
done
for r in $(seq "$ROUNDS"); do
  for i in "${!urls[@]}"; do
    wrk -t1 -c2 -d"$DURATION" --latency "http://127.0.0.1:$(missport "${urls[$i]}")${urls[$i]#*|}" > "$out/miss-$i-$r.txt"
    wrk -t1 -c8 -d"$DURATION" --latency "http://127.0.0.1:18411${urls[$i]#*|}" > "$out/hit-$i-$r.txt"
  done
done
python3 - "$out" "$ROUNDS" "$DURATION" "${urls[@]}" <<'PY'
import re, statistics, sys
out, rounds, duration = sys.argv[1], int(sys.argv[2]), sys.argv[3]
names = [u.split("|")[0] for u in sys.argv[4:]]
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v); x = float(m.group(1))
    return x / 1000 if m.group(2) == "us" else x * 1000 if m.group(2) == "s" else x
def figures(kind, i):
    rps, p50 = [], []
    for r in range(1, rounds + 1):
        t = open(f"{out}/{kind}-{i}-{r}.txt").read()
        assert "Non-2xx" not in t, t
        rps.append(float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1)))
        p50.append(ms(re.search(r"^\s+50%\s+(\S+)", t, re.M).group(1)))
    return statistics.median(rps), statistics.median(p50)
for kind, title in (("miss", f"Misses (result cache off), wrk -t1 -c2"), ("hit", "Hits, wrk -t1 -c8")):
    print(f"{title}, {rounds} alternating rounds of {duration}, medians:\n")
    print("| source, gravity | req/s | p50 | against smart (p50) | upsample on / off (p50) |")
    print("|---|---:|---:|---:|---:|")
    f = [figures(kind, i) for i in range(len(names))]
    for i, name in enumerate(names):
        if kind == "hit" and "upsample" in name:
            continue
        smart = names.index(name.split(" ")[0] + " smart")
        ratio = f"{f[i][1] / f[smart][1]:.2f}×" if smart != i else ""
        once = f"{f[i][1] / f[i + 1][1]:.2f}×" if name.endswith(" face") and kind == "miss" else ""
        print(f"| {name} | {f[i][0]:.1f} | {f[i][1]:.2f} ms | {ratio} | {once} |")
    print()
PY
