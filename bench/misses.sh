#!/usr/bin/env bash
# Cache misses before and after a change, in one run: this checkout's Aspect and the same
# service at an earlier commit, each with its result cache off (cache.maxBytes=0), asked
# for big.jpg → a fill of W×225, JPEG q80, W running through 200–599 so that every request
# in flight is another key (no two share a render): natively, and as the imgproxy URL that
# means the same (imgproxy.enabled, no key). wrk -t2 -c8, rounds alternating the servers,
# medians.
#
#   BEFORE_REF=01478d4 bash bench/misses.sh
#   BEFORE_REF=01478d4 BEFORE_BIN=/path/to/that/checkout/.build/release/aspect bash bench/misses.sh
# Env: ROUNDS (5), DURATION (10s), CONNS (8), BEFORE_REF (required: the commit to compare
#      with), BEFORE_BIN (that commit's release `aspect`, built already).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; DURATION="${DURATION:-10s}"; CONNS="${CONNS:-8}"
: "${BEFORE_REF:?name the commit to compare with: BEFORE_REF=…}"
. bench/lib.sh
bench_start wrk curl
before_build
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
  before_cleanup
}
trap cleanup EXIT

NATIVE="/thumb?src=big.jpg&w=300&h=225&mode=fill&format=jpeg&q=80"
DIALECT="/insecure/rs:fill:300:225/q:80/plain/big.jpg@jpg"
# wrk's script: the width of each request from a counter, so keys do not repeat in flight.
cat > "$out/widths.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  local w = 200 + (n * 7 + math.random(0, 6)) % 400
  local path = wrk.path:gsub("300", tostring(w), 1)
  return wrk.format(nil, path)
end
LUA
start() {  # name binary port folder
  env -C "$4" ASPECT_LOG_ACCESS=false ASPECT_CACHE_MAXBYTES=0 ASPECT_IMGPROXY_ENABLED=true \
    setsid "$2" serve --port "$3" --images "$IMAGES" --cache-dir "$out/cache-$1" >/dev/null 2>"$out/aspect-$1.log" &
  pids+=($!)
  wait_http "http://127.0.0.1:$3/healthz" 30
  for path in "$NATIVE" "$DIALECT"; do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$3$path")" = 200 ] \
      || { echo "$1 did not answer $path" >&2; exit 1; }
  done
}
start after "$BIN" 18290 "$PWD"
start before "$BEFORE" 18291 "$BEFORE_DIR"
targets=(
  "native, this checkout|http://127.0.0.1:18290$NATIVE" "native, at $BEFORE_REF|http://127.0.0.1:18291$NATIVE"
  "imgproxy URL, this checkout|http://127.0.0.1:18290$DIALECT" "imgproxy URL, at $BEFORE_REF|http://127.0.0.1:18291$DIALECT"
)
for r in $(seq "$ROUNDS"); do
  for i in "${!targets[@]}"; do
    wrk -t2 -c"$CONNS" -d"$DURATION" --latency -s "$out/widths.lua" "${targets[$i]#*|}" > "$out/wrk-$i-$r.txt"
  done
done
echo "### Cache misses (result cache off, a new key each request): big.jpg → W×225 fill (W 200–599), JPEG q80, wrk -t2 -c$CONNS, $ROUNDS alternating rounds of $DURATION, medians"
echo
python3 - "$out" "$ROUNDS" "${targets[@]}" <<'PY'
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
names = [t.split("|")[0] for t in sys.argv[3:]]
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v); x = float(m.group(1))
    return x / 1000 if m.group(2) == "us" else x * 1000 if m.group(2) == "s" else x
rows = []
for i, name in enumerate(names):
    rps, p50, errs = [], [], 0
    for r in range(1, rounds + 1):
        t = open(f"{out}/wrk-{i}-{r}.txt").read()
        rps.append(float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1)))
        p50.append(ms(re.search(r"^\s+50%\s+(\S+)", t, re.M).group(1)))
        e = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
        errs += int(e.group(1)) if e else 0
    rows.append((name, statistics.median(rps), min(rps), max(rps), statistics.median(p50), errs))
print("| request, build | req/s (median) | range | p50 ms | non-2xx | vs the earlier build |")
print("|---|---:|---:|---:|---:|---:|")
for k, (name, rps, lo, hi, p50, errs) in enumerate(rows):
    base = rows[k + 1][1] if k % 2 == 0 else rps
    print(f"| {name} | {rps:,.1f} | {lo:,.1f}–{hi:,.1f} | {p50:.1f} | {errs} | {rps / base:.2f}× |")
PY
