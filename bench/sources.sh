#!/usr/bin/env bash
# Sources from an HTTP origin beside the same work from a folder, in one run (issue 15):
#   1. misses of big.jpg once its download is kept: origin root against folder root
#      (unique sizes, so every request renders), alternating, medians of each;
#   2. the first request for a new source: the download on top of the render;
#   3. five sizes of one new source asked at once: downloads, from the origin's own log;
#   4. cache hits while 200 requests wait on a stalled origin, against a quiet run.
# The origin is nginx serving the peers' corpus, with /stall/ proxied to a socket that
# accepts and never answers.
#
#   bash bench/sources.sh
# Env: ROUNDS (5), N (20 misses a round), DURATION (10s), CONNS (64).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; N="${N:-20}"; DURATION="${DURATION:-10s}"; CONNS="${CONNS:-64}"
PEERS="$(cd ../shared/peers && pwd)"
bash scripts/setup.sh
. "$PEERS/common.sh"
need_apt wrk curl nginx-light
[ -f "$IMAGES/big.jpg" ] || "$PEERS/make-corpus.sh" >/dev/null
swift build -c release --product aspect >/dev/null
BIN="$PWD/$(swift build -c release --show-bin-path | sed "s|^$PWD/||")/aspect"
out=$(mktemp -d); echo "raw output: $out" >&2
chmod 755 "$out"  # nginx's workers run as nobody
mkdir -p "$out/images" "$out/nginx/logs"
for i in $(seq 0 40); do cp "$IMAGES/big.jpg" "$out/images/new-$i.jpg"; done
cp "$IMAGES/big.jpg" "$out/images/big.jpg"

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  [ -f "$out/nginx/nginx.pid" ] && kill "$(cat "$out/nginx/nginx.pid")" 2>/dev/null || true
}
trap cleanup EXIT

# The staller: accepts, reads, never answers.
setsid python3 -c '
import socket, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 18292)); s.listen(1024); held = []
while True:
    c, _ = s.accept(); held.append(c)
' >/dev/null 2>&1 &
pids+=($!)
cat > "$out/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $out/nginx/nginx.pid;
error_log $out/nginx/logs/error.log;
events { worker_connections 4096; }
http {
  access_log $out/nginx/logs/access.log;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:18290;
    root $out/images;
    etag on;
    location /stall/ { proxy_pass http://127.0.0.1:18292; proxy_read_timeout 600s; }
  }
}
CONF
nginx -p "$out/nginx/" -c "$out/nginx/nginx.conf"
wait_http "http://127.0.0.1:18290/big.jpg" 10

start_aspect() {  # name port root [env...]
  local name=$1 port=$2 root=$3; shift 3
  env "$@" ASPECT_LOG_ACCESS=false ASPECT_IMAGES_ROOT="$root" ASPECT_CACHE_DIR="$out/cache-$name" \
    ASPECT_SOURCES_REVALIDATESECONDS=3600 ASPECT_SOURCES_TIMEOUTMS=600000 ASPECT_HTTP_DEMOPAGE=false \
    setsid "$BIN" serve --port "$port" >/dev/null 2>"$out/aspect-$name.log" &
  pids+=($!)
  wait_http "http://127.0.0.1:$port/healthz" 30
}
start_aspect folder 18280 "$out/images"
start_aspect origin 18281 "http://127.0.0.1:18290/"
. bench/lib.sh

# 1. Misses once the source is kept (the first request downloads it; not counted here).
time_of "http://127.0.0.1:18281/thumb?src=big.jpg&w=10" >/dev/null
: > "$out/miss-folder.txt"; : > "$out/miss-origin.txt"
w=100
for r in $(seq "$ROUNDS"); do
  for i in $(seq "$N"); do
    w=$((w + 1))
    time_of "http://127.0.0.1:18280/thumb?src=big.jpg&w=$w&ratio=4:3&mode=fill" >> "$out/miss-folder.txt"
    time_of "http://127.0.0.1:18281/thumb?src=big.jpg&w=$w&ratio=4:3&mode=fill" >> "$out/miss-origin.txt"
  done
done
# 2. First requests of new sources (a copy each, so each is a download on the origin side).
: > "$out/first-folder.txt"; : > "$out/first-origin.txt"
for i in $(seq 0 19); do
  time_of "http://127.0.0.1:18280/thumb?src=new-$i.jpg&w=300&ratio=4:3&mode=fill" >> "$out/first-folder.txt"
  time_of "http://127.0.0.1:18281/thumb?src=new-$i.jpg&w=300&ratio=4:3&mode=fill" >> "$out/first-origin.txt"
done
# 3. Five sizes of one new source at once.
fpids=()
for w in 100 150 200 250 300; do
  curl -s -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:18281/thumb?src=new-30.jpg&w=$w" >> "$out/five.txt" &
  fpids+=($!)
done
wait "${fpids[@]}"
downloads=$(grep -c 'GET /new-30.jpg ' "$out/nginx/logs/access.log" || true)
# 4. Hits, quiet and with 200 requests stalled at the origin, alternating.
HIT="http://127.0.0.1:18281/thumb?src=big.jpg&w=300&ratio=4:3&mode=fill"
curl -s -o /dev/null "$HIT"
stalled=0
for r in $(seq "$ROUNDS"); do
  wrk -t2 -c"$CONNS" -d"$DURATION" "$HIT" > "$out/wrk-quiet-$r.txt"
  cpids=()
  for i in $(seq 200); do
    stalled=$((stalled + 1))
    curl -s -o /dev/null --max-time 600 "http://127.0.0.1:18281/thumb?src=stall/$stalled.jpg&w=100" & cpids+=($!)
  done
  sleep 1
  inflight=$(curl -s http://127.0.0.1:18281/metrics | awk '/^aspect_source_fetches_in_flight/{print $2}')
  wrk -t2 -c"$CONNS" -d"$DURATION" "$HIT" > "$out/wrk-stalled-$r.txt"
  echo "$inflight" >> "$out/inflight.txt"
  kill "${cpids[@]}" 2>/dev/null || true
  wait "${cpids[@]}" 2>/dev/null || true
done

python3 - "$out" "$ROUNDS" "$N" "$downloads" "$(tr '\n' ' ' < "$out/five.txt")" <<'PY'
import re, statistics, sys
out, rounds, n, downloads, five = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
def col(name): return [float(x) * 1000 for x in open(f"{out}/{name}.txt").read().split()]
mf, mo = col("miss-folder"), col("miss-origin")
ff, fo = col("first-folder"), col("first-origin")
print(f"### Sources from an HTTP origin (nginx on loopback) beside a folder: {rounds} rounds, medians\n")
print("| request | folder root, ms | origin root, ms | origin / folder |")
print("|---|---|---|---|")
for label, a, b in [(f"miss, source already kept ({rounds}×{n} unique sizes of big.jpg, 4:3 fill)", mf, mo),
                    ("first request of a new source (20 copies of big.jpg, 300×225 fill)", ff, fo)]:
    x, y = statistics.median(a), statistics.median(b)
    print(f"| {label} | {x:.1f} | {y:.1f} | {y / x:.2f}× |")
print(f"\nFive sizes of one new source asked at once: statuses {five.strip()}; downloads in the origin's log: {downloads}.\n")
def rps(kind):
    return [float(re.search(r"Requests/sec:\s+([\d.]+)", open(f"{out}/wrk-{kind}-{r}.txt").read()).group(1))
            for r in range(1, rounds + 1)]
q, s = rps("quiet"), rps("stalled")
inflight = open(f"{out}/inflight.txt").read().split()
print("| cache hits, wrk -t2 -c64 | req/s (median) | range |")
print("|---|---|---|")
print(f"| quiet | {statistics.median(q):.0f} | {min(q):.0f}–{max(q):.0f} |")
print(f"| 200 requests waiting on a stalled origin (fetches in flight: {', '.join(inflight)}) | {statistics.median(s):.0f} | {min(s):.0f}–{max(s):.0f} |")
print(f"\nStalled / quiet: {statistics.median(s) / statistics.median(q):.2f}×")
PY
