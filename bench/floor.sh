#!/usr/bin/env bash
# Misses at the decode floor (issue 53), per photo, side by side in one run:
#   - the floor: libjpeg-turbo's own scaled decode of the JPEG (`djpeg -scale 1/N`, N the
#     shrink Aspect's rule picks for the box), or libvips' own loader for the others (in
#     process, pyvips: the decode alone, no resize, no encode), ms of CPU per decode;
#   - Aspect's misses (release build, the default configuration: sandboxed render workers,
#     the result cache on), a W×H fill, JPEG q80, every request another box so that every
#     one is a miss and none waits for another (checked: /metrics' renders grow by the
#     requests answered and no waiter is coalesced), CPU of the service and its workers
#     per miss, from /proc;
#   - the minimal pyvips server of ../shared/peers (Image.thumbnail with crop, JPEG Q 80)
#     asked the same boxes, CPU per request the same way.
# wrk -t2 -c8, rounds alternating the two servers, medians.
#
#   bash bench/floor.sh
#   BEFORE_BIN=/path/to/an/earlier/checkout/.build/release/aspect bash bench/floor.sh
# Env: ROUNDS (3), DURATION (10s), CONNS (8), PHOTOS (big.jpg medium.jpg alpha.png
#      medium.webp; medium.webp is made from medium.jpg by libvips), BEFORE_BIN (an
#      earlier build of Aspect, built already: a third server in the rounds, the same way).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; DURATION="${DURATION:-10s}"; CONNS="${CONNS:-8}"
PHOTOS="${PHOTOS:-big.jpg medium.jpg alpha.png medium.webp}"
. bench/lib.sh
bench_start wrk curl libjpeg-turbo-progs libvips-tools
need_venv "$OPT/pyvips" "pyvips==$PYVIPS_VERSION"
PY="$OPT/pyvips/bin/python"
bash scripts/fetch-photos.sh >/dev/null
mkdir -p "$out/images"
cp .build/photos/big.jpg .build/photos/medium.jpg .build/photos/alpha.png "$out/images/"
vips copy "$out/images/medium.jpg" "$out/images/medium.webp[Q=90]"

pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done; }
trap cleanup EXIT
ASPECT_PORT=18190; PYVIPS_AT=18191
ASPECT_LOG_ACCESS=false setsid "$BIN" serve --port "$ASPECT_PORT" --images "$out/images" \
  --cache-dir "$out/cache" >/dev/null 2>"$out/aspect.log" &
pids+=($!); aspect_pid=$!
PYVIPS_ROOT="$out/images" PYVIPS_PORT="$PYVIPS_AT" setsid "$PY" "$PEERS/pyvips_server.py" \
  >/dev/null 2>"$out/pyvips.log" &
pids+=($!); pyvips_pid=$!
servers="aspect pyvips"
if [ -n "${BEFORE_BIN:-}" ]; then
  BEFORE_PORT=18192
  ASPECT_LOG_ACCESS=false setsid "$BEFORE_BIN" serve --port "$BEFORE_PORT" --images "$out/images" \
    --cache-dir "$out/cache-before" >/dev/null 2>"$out/before.log" &
  pids+=($!); before_pid=$!
  wait_http "http://127.0.0.1:$BEFORE_PORT/readyz" 30
  servers="aspect pyvips before"
fi
wait_http "http://127.0.0.1:$ASPECT_PORT/readyz" 30
wait_http "http://127.0.0.1:$PYVIPS_AT/" 30

# wrk's script: each request another box (W 200–599, H 150–449: 120,000 boxes, by a
# counter that starts at OFFSET × 10,000 and runs 5,000 apart in each of wrk's two
# threads), so nothing repeats within a round, nor across a server's rounds (OFFSET is the
# round: up to 11 rounds of at most 5,000 requests a thread).
cat > "$out/boxes.lua" <<'LUA'
local counter = 0
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
function init(args)
  n = tonumber(os.getenv("OFFSET")) * 10000 + id * 5000
end
request = function()
  n = n + 1
  local w = 200 + n % 400
  local h = 150 + math.floor(n / 400) % 300
  local path = wrk.path:gsub("WW", tostring(w), 1):gsub("HH", tostring(h), 1)
  return wrk.format(nil, path)
end
LUA


for photo in $PHOTOS; do
  # The floor: the decode alone, at the shrink Aspect picks for the largest box asked.
  case "$photo" in
  *.jpg)
    size=$(vipsheader -f width "$out/images/$photo")x$(vipsheader -f height "$out/images/$photo")
    shrink=$(python3 -c "
w,h='$size'.split('x'); s=min(int(w)/400,int(h)/300)
print(next((n for n in (8,4,2) if s>=n),1))")
    python3 - "$out/images/$photo" "$shrink" > "$out/floor-$photo.txt" <<'PY'
import resource, subprocess, sys
path, shrink = sys.argv[1], sys.argv[2]
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
times = []
for _ in range(15):
    before = cpu()
    subprocess.run(["djpeg", "-scale", f"1/{shrink}", "-outfile", "/dev/null", path], check=True)
    times.append((cpu() - before) * 1000)
times.sort()
print(f"{times[len(times) // 2]:.1f} djpeg -scale 1/{shrink}")
PY
    ;;
  *)
    "$PY" - "$out/images/$photo" > "$out/floor-$photo.txt" <<'PY'
import resource, sys, pyvips
pyvips.cache_set_max(0)
path = sys.argv[1]
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
image = pyvips.Image.new_from_file(path)
# The loader's own shrink where it has one (WebP scales in libwebp), as for a 400-wide box.
scale = min(1.0, 400 / image.width) if path.endswith(".webp") else 1.0
times = []
for _ in range(15):
    before = cpu()
    options = {"scale": scale} if path.endswith(".webp") else {}
    pyvips.Image.new_from_file(path, access="sequential", **options).avg()
    times.append((cpu() - before) * 1000)
times.sort()
loader = "webpload scale %.3f" % scale if path.endswith(".webp") else "pngload"
print(f"{times[len(times) // 2]:.1f} libvips {loader}")
PY
    ;;
  esac
  for r in $(seq "$ROUNDS"); do
    for server in $servers; do
      offset=$r
      case "$server" in
      aspect | before)
        port=$ASPECT_PORT; p=$aspect_pid
        if [ "$server" = before ]; then port=$BEFORE_PORT; p=$before_pid; fi
        url="http://127.0.0.1:$port/thumb?src=$photo&w=WW&h=HH&mode=fill&format=jpeg&q=80"
        renders=$(metric "$port" aspect_renders_total)
        ;;
      *) url="http://127.0.0.1:$PYVIPS_AT/WWxHH/$photo"; p=$pyvips_pid ;;
      esac
      c0=$(cpu_ticks "$p")
      OFFSET=$offset wrk -t2 -c"$CONNS" -d"$DURATION" --latency -s "$out/boxes.lua" "$url" \
        > "$out/$server-$photo-$r.txt"
      c1=$(cpu_ticks "$p")
      echo "cpu_ticks=$((c1 - c0))" >> "$out/$server-$photo-$r.txt"
      if [ "$server" != pyvips ]; then
        echo "renders=$(($(metric "$port" aspect_renders_total) - renders))" >> "$out/$server-$photo-$r.txt"
      fi
    done
  done
done
coalesced=$(metric "$ASPECT_PORT" aspect_coalesced_waiters_total)
echo "coalesced=$coalesced" > "$out/coalesced.txt"
before=0; [ -n "${BEFORE_BIN:-}" ] && before=1

python3 - "$out" "$ROUNDS" "$DURATION" "$CONNS" "$(getconf CLK_TCK)" "$PHOTOS" "$before" <<'PY'
import re, statistics, sys
out, rounds, duration, conns, hz, photos = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6].split()
before = sys.argv[7] == "1"
coalesced = int(open(f"{out}/coalesced.txt").read().split("=")[1] or 0)
def run(server, photo, r):
    text = open(f"{out}/{server}-{photo}-{r}.txt").read()
    n = int(re.search(r"(\d+) requests in", text).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    ticks = int(re.search(r"cpu_ticks=(\d+)", text).group(1))
    renders = re.search(r"renders=(\d+)", text)
    return n, rps, int(bad.group(1)) if bad else 0, 1000 * ticks / hz / max(1, n), int(renders.group(1)) if renders else None
print(f"### Misses at the decode floor: W×H fill (W 200–599, H 150–449, every box once), JPEG q80, "
      f"wrk -t2 -c{conns}, {rounds} alternating rounds of {duration}, medians\n")
print("| photo | floor ms | Aspect CPU ms a miss | vs floor | pyvips CPU ms | Aspect req/s | pyvips req/s | Aspect vs pyvips |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
problems = []
for photo in photos:
    floor_ms, how = open(f"{out}/floor-{photo}.txt").read().split(" ", 1)
    a = [run("aspect", photo, r) for r in range(1, rounds + 1)]
    p = [run("pyvips", photo, r) for r in range(1, rounds + 1)]
    for n, _, bad, _, renders in a:
        if bad: problems.append(f"{photo}: Aspect answered {bad} non-2xx")
        if renders is not None and renders < n: problems.append(f"{photo}: {n} answers but {renders} renders (not all misses)")
    for _, _, bad, _, _ in p:
        if bad: problems.append(f"{photo}: pyvips answered {bad} non-2xx")
    acpu = statistics.median(x[3] for x in a); pcpu = statistics.median(x[3] for x in p)
    arps = statistics.median(x[1] for x in a); prps = statistics.median(x[1] for x in p)
    print(f"| {photo} ({how.strip()}) | {float(floor_ms):.1f} | {acpu:.1f} | {acpu / float(floor_ms):.2f}× | {pcpu:.1f} | {arps:.1f} | {prps:.1f} | {arps / prps:.2f}× |")
if before:
    print("\n| photo | Aspect CPU ms a miss | before | after vs before | Aspect req/s | before | after vs before |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for photo in photos:
        a = [run("aspect", photo, r) for r in range(1, rounds + 1)]
        b = [run("before", photo, r) for r in range(1, rounds + 1)]
        for n, _, bad, _, renders in b:
            if bad: problems.append(f"{photo}: the earlier build answered {bad} non-2xx")
            if renders is not None and renders < n: problems.append(f"{photo}: before: {n} answers but {renders} renders")
        acpu = statistics.median(x[3] for x in a); bcpu = statistics.median(x[3] for x in b)
        arps = statistics.median(x[1] for x in a); brps = statistics.median(x[1] for x in b)
        print(f"| {photo} | {acpu:.1f} | {bcpu:.1f} | {bcpu / acpu:.2f}× less | {arps:.1f} | {brps:.1f} | {arps / brps:.2f}× |")
print(f"\nWaiters coalesced over the run: {coalesced} (0: every request a render of its own).")
for p in problems: print("PROBLEM:", p)
PY
