#!/usr/bin/env bash
# Renders in worker processes against renders in the service's threads (SPEC: Isolation),
# one release build run twice side by side: server.isolation=process and =thread, the
# result cache off for the misses (every request renders, W walking so no two requests in
# flight share a key), wrk -t2 -c8, rounds alternating, medians. Misses on a 1920×1280
# JPEG (the peers' medium.jpg) to W×(2/3 W), W 412–611, and on the first page of the
# sample PDF to W wide; the JPEG misses again with server.workerJobs 1, 10 and 0 (never
# replaced) beside the default 100 (issue 51: what a short worker life costs); then hits
# (a cached result, wrk -c64 keep-alive); then each service's memory, its workers'
# included, as RSS and as PSS (RSS counts the libraries' pages a worker shares once per
# process; PSS divides them among the processes that share them).
#   bash bench/isolation.sh
# Env: ROUNDS (5), DURATION (10s).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; DURATION="${DURATION:-10s}"
. bench/lib.sh
bench_start wrk curl
mkdir -p "$out/images"
"$BIN" samples "$out/images" >/dev/null
cp "$IMAGES/medium.jpg" "$out/images/medium.jpg"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done; }
trap cleanup EXIT
start() {  # isolation port cache-bytes [workerJobs]
  ASPECT_LOG_ACCESS=false ASPECT_SERVER_ISOLATION="$1" ASPECT_CACHE_MAXBYTES="$3" ASPECT_SERVER_WORKERJOBS="${4:-100}" \
    setsid "$BIN" serve --port "$2" --images "$out/images" --cache-dir "$out/cache-$1-$3-$2" \
    >/dev/null 2>"$out/aspect-$1-$3.log" &
  pids+=($!)
  wait_http "http://127.0.0.1:$2/healthz" 30
}
start process 18390 0
start thread 18391 0
start process 18394 0 1
start process 18395 0 10
start process 18396 0 0
cat > "$out/widths.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  local w = 412 + (n * 7 + math.random(0, 6)) % 200
  return wrk.format(nil, (wrk.path:gsub("WIDTH", tostring(w), 1)))
end
LUA
JPEG="/thumb?src=medium.jpg&w=WIDTH&format=jpeg&q=80"
PDF="/thumb?src=brochure.pdf&w=WIDTH&format=jpeg&q=80"
targets=(
  "2K JPEG miss, process|http://127.0.0.1:18390$JPEG" "2K JPEG miss, thread|http://127.0.0.1:18391$JPEG"
  "PDF page miss, process|http://127.0.0.1:18390$PDF" "PDF page miss, thread|http://127.0.0.1:18391$PDF"
  "2K JPEG miss, process, workerJobs=1|http://127.0.0.1:18394$JPEG"
  "2K JPEG miss, process, workerJobs=10|http://127.0.0.1:18395$JPEG"
  "2K JPEG miss, process, workerJobs=0 (never)|http://127.0.0.1:18396$JPEG"
)
for t in "${targets[@]}"; do
  u="${t#*|}"; [ "$(curl -s -o /dev/null -w '%{http_code}' "${u/WIDTH/500}")" = 200 ] || { echo "$t failed" >&2; exit 1; }
done
for r in $(seq "$ROUNDS"); do
  for i in "${!targets[@]}"; do
    wrk -t2 -c8 -d"$DURATION" --latency -s "$out/widths.lua" "${targets[$i]#*|}" > "$out/wrk-$i-$r.txt"
  done
done
# Hits: a cached result on services with their caches on.
start process 18392 1GiB
start thread 18393 1GiB
HIT="/thumb?src=landscape.jpg&w=300&h=225&mode=fill&format=jpeg"
for p in 18392 18393; do curl -s -o /dev/null "http://127.0.0.1:$p$HIT"; done
hits=("hit, process|http://127.0.0.1:18392$HIT" "hit, thread|http://127.0.0.1:18393$HIT")
for r in $(seq "$ROUNDS"); do
  for i in 0 1; do
    wrk -t2 -c64 -d"$DURATION" --latency "${hits[$i]#*|}" > "$out/wrk-$((i + ${#targets[@]}))-$r.txt"
  done
done
rss() {  # port: the kB of the service on it and of its children, RSS and PSS
  local pid; pid=$(ss -ltnpH "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
  local all; all="$pid $(cat /proc/"$pid"/task/*/children 2>/dev/null)"
  local kids; kids=$(echo "$all" | wc -w); kids=$((kids - 1))
  local total; total=$(ps -o rss= -p $all | awk '{s+=$1} END {print s}')
  local pss; pss=$(for p in $all; do awk '/^Pss:/ {print $2}' /proc/"$p"/smaps_rollup 2>/dev/null; done | awk '{s+=$1} END {print s}')
  echo "$total $pss $kids"
}
echo "### Isolation: renders in worker processes beside renders in threads, $ROUNDS alternating rounds of $DURATION, medians"
echo
python3 - "$out" "$ROUNDS" "${targets[@]}" "${hits[@]}" <<'PY'
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
names = [t.split("|")[0] for t in sys.argv[3:]]
rows = []
for i, name in enumerate(names):
    rps = [float(re.search(r"Requests/sec:\s+([\d.]+)", open(f"{out}/wrk-{i}-{r}.txt").read()).group(1))
           for r in range(1, rounds + 1)]
    rows.append((name, statistics.median(rps), min(rps), max(rps)))
print("| request, isolation | req/s (median) | range | against |")
print("|---|---:|---:|---:|")
by = {name: rps for name, rps, _, _ in rows}
for name, rps, lo, hi in rows:
    if "workerJobs" in name:
        base, against = "2K JPEG miss, process", "workerJobs=100"
    elif name.endswith("process"):
        base, against = name.replace("process", "thread"), "thread"
    else:
        base, against = name, ""
    ratio = f"{rps / by[base]:.2f}× {against}" if against else ""
    print(f"| {name} | {rps:,.1f} | {lo:,.1f}–{hi:,.1f} | {ratio} |")
PY
echo
echo "| service (cache on, after the hits) | RSS kB, workers included | PSS kB, workers included | processes |"
echo "|---|---:|---:|---:|"
read -r kb pss kids < <(rss 18392); echo "| process | $kb | $pss | $((kids + 1)) |"
read -r kb pss kids < <(rss 18393); echo "| thread | $kb | $pss | $((kids + 1)) |"
