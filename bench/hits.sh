#!/usr/bin/env bash
# Cache hits beside nginx, before and after a change, in one run: nginx serving the very
# bytes of Aspect's cached 300×225 thumbnail of big.jpg as a static file, this checkout's
# Aspect serving them as X-Cache: HIT (asked with format=jpeg, and as format=auto, the
# same bytes for a client that sends no Accept), and (with BEFORE_REF) the same service
# built from an earlier commit. wrk -t2 -c64, rounds alternating the servers, medians;
# once with keep-alive and once with a new connection for every request
# (`Connection: close`), where accept and close dominate.
#
#   bash bench/hits.sh
#   BEFORE_REF=20caf80 bash bench/hits.sh
# Env: ROUNDS (5), DURATION (10s), CONNS (64), BEFORE_REF (a commit to build beside),
#      BEFORE_BIN (instead: that commit's release `aspect`, built already, with BEFORE_REF
#      naming it), MODES ("keepalive close"), THREADS (wrk's, 2).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; DURATION="${DURATION:-10s}"; CONNS="${CONNS:-64}"; MODES="${MODES:-keepalive close}"
THREADS="${THREADS:-2}"
PEERS="$(cd ../shared/peers && pwd)"
bash scripts/setup.sh
. "$PEERS/common.sh"
need_apt wrk curl nginx-light
swift build -c release --product aspect >/dev/null
NEW="$PWD/$(swift build -c release --show-bin-path | sed "s|^$PWD/||")/aspect"
out=$(mktemp -d); echo "raw output: $out" >&2
. bench/lib.sh
before_build
[ -f "$THUMBS/big.jpg" ] || "$PEERS/make-corpus.sh" >/dev/null
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  stop_pidfile "$RUN/nginx-static.pid"
  before_cleanup
}
trap cleanup EXIT

PATH_Q="/thumb?src=big.jpg&w=300&h=225&mode=fill&format=jpeg&q=80"
start_aspect() {  # name binary port folder (its config.json is the build's own)
  env -C "$4" ASPECT_LOG_ACCESS=false setsid "$2" serve --port "$3" --images "$IMAGES" --cache-dir "$out/cache-$1" \
    >/dev/null 2>"$out/aspect-$1.log" &
  pids+=($!)
  wait_http "http://127.0.0.1:$3/healthz" 30
  curl -s -o "$out/hit-$1.jpg" "http://127.0.0.1:$3$PATH_Q"
  [ "$(curl -s -D - -o /dev/null "http://127.0.0.1:$3$PATH_Q" | tr -d '\r' | awk -F': ' '/^X-Cache/{print $2}')" = HIT ]
}
targets=()
start_aspect after "$NEW" 18190 "$PWD"
targets+=("Aspect, this checkout|http://127.0.0.1:18190$PATH_Q")
AUTO_Q="/thumb?src=big.jpg&w=300&h=225&mode=fill&q=80"
curl -s -o "$out/hit-auto.jpg" "http://127.0.0.1:18190$AUTO_Q"
cmp -s "$out/hit-auto.jpg" "$out/hit-after.jpg" || { echo "format=auto gave other bytes" >&2; exit 1; }
targets+=("Aspect, this checkout, format=auto|http://127.0.0.1:18190$AUTO_Q")
if [ -n "$BEFORE" ]; then
  start_aspect before "$BEFORE" 18191 "$BEFORE_DIR"
  targets+=("Aspect at $BEFORE_REF|http://127.0.0.1:18191$PATH_Q")
  cmp -s "$out/hit-after.jpg" "$out/hit-before.jpg" || echo "note: the two builds' thumbnails differ in bytes" >&2
fi
# nginx serves the same bytes Aspect serves.
cp "$out/hit-after.jpg" "$THUMBS/aspect-hit.jpg"
"$PEERS/start-nginx-static.sh" >&2
targets=("nginx, the same bytes as a static file|http://127.0.0.1:$NGINX_STATIC_PORT/aspect-hit.jpg" "${targets[@]}")
for mode in $MODES; do
  header=(); [ "$mode" = close ] && header=(-H 'Connection: close')
  for r in $(seq "$ROUNDS"); do
    for i in "${!targets[@]}"; do
      wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "${header[@]}" "${targets[$i]#*|}" > "$out/wrk-$mode-$i-$r.txt"
    done
  done
  echo "### Cache hits, $mode: $(stat -c %s "$out/hit-after.jpg")-byte thumbnail, wrk -t$THREADS -c$CONNS${header:+ -H 'Connection: close'}, $ROUNDS alternating rounds of $DURATION, medians"
  echo
  python3 - "$out" "$ROUNDS" "$mode" "${#targets[@]}" "${targets[@]}" <<'PY'
import re, statistics, sys
out, rounds, mode, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
names = [t.split("|")[0] for t in sys.argv[5:5 + n]]
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v); x = float(m.group(1))
    return x / 1000 if m.group(2) == "us" else x * 1000 if m.group(2) == "s" else x
rows = []
for i in range(n):
    rps, p99, errs = [], [], 0
    for r in range(1, rounds + 1):
        t = open(f"{out}/wrk-{mode}-{i}-{r}.txt").read()
        rps.append(float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1)))
        p99.append(ms(re.search(r"^\s+99%\s+(\S+)", t, re.M).group(1)))
        e = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
        errs += int(e.group(1)) if e else 0
    rows.append((names[i], statistics.median(rps), min(rps), max(rps), statistics.median(p99), errs))
print("| server | req/s (median) | range | p99 ms | non-2xx | vs nginx |")
print("|---|---:|---:|---:|---:|---:|")
for name, rps, lo, hi, p99, errs in rows:
    print(f"| {name} | {rps:,.0f} | {lo:,.0f}–{hi:,.0f} | {p99:.2f} | {errs} | {rps / rows[0][1]:.2f}× |")
PY
  echo
done
