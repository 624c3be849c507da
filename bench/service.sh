#!/usr/bin/env bash
# Service benchmark, all against the team's peers (../shared/peers) in one run:
#   1. cache hit: Aspect serving a cached 300×225 thumbnail vs nginx serving the same
#      bytes as a static file, wrk -c64 keep-alive, alternating rounds, medians;
#   2. cache miss: big.jpg → 300×225 fill, JPEG q80, Aspect with its cache off, beside the
#      minimal pyvips server, thumbor and nginx image_filter: the peers' bench.sh (wrk -c8,
#      response checked against a libvips reference), with Aspect as its extra peer;
#   3. the same at -c16, for each server's peak RSS;
#   4. misses, Aspect and the pyvips server alone in alternating rounds of wrk -c8 (both
#      fed the same photo, PHOTO, → 300×225 fill), medians, with each server's CPU per request
#      and the share of the machine left idle: the side-by-side figure for the miss goal.
#      Aspect runs twice: as configured by default, and with images.fastShrinkOnLoad=false
#      (libvips' own shrink-on-load rule, the one the pyvips server gets), so the table
#      shows what the rule is worth apart from the rest.
#   bash bench/service.sh
# Env: ROUNDS (3), DURATION (10s), HITS_ONLY (1: stop after part 1), PHOTO (big.jpg: the
# source of the misses, any photo of the peers' corpus), SIDE_BY_SIDE_ONLY (1: part 4 only).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; DURATION="${DURATION:-10s}"; PHOTO="${PHOTO:-big.jpg}"
ALL=1; [ "${SIDE_BY_SIDE_ONLY:-0}" = 1 ] && ALL=0
PEERS="$(cd ../shared/peers && pwd)"
bash scripts/setup.sh
. "$PEERS/common.sh"
need_apt wrk curl nginx-light
swift build -c release --product aspect >/dev/null
BIN="$PWD/$(swift build -c release --show-bin-path | sed "s|^$PWD/||")/aspect"
[ -f "$THUMBS/big.jpg" ] || "$PEERS/make-corpus.sh" >/dev/null
out=$(mktemp -d); echo "raw output: $out" >&2
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  stop_pidfile "$RUN/nginx-static.pid"; stop_pidfile "$RUN/pyvips.pid"
}
trap cleanup EXIT

start_aspect() {  # port cache-bytes extra-env...
  local port="$1" bytes="$2"; shift 2
  env ASPECT_LOG_ACCESS=false ASPECT_CACHE_MAXBYTES="$bytes" "$@" setsid "$BIN" serve --port "$port" \
    --images "$IMAGES" --cache-dir "$out/cache-$port" >/dev/null 2>"$out/aspect-$port.log" &
  pids+=($!)
  wait_http "http://127.0.0.1:$port/healthz" 30
}

# 1. Hits.
if [ "$ALL" = 1 ]; then
"$PEERS/start-nginx-static.sh" >&2
start_aspect 18090 1GiB
HIT="http://127.0.0.1:18090/thumb?src=big.jpg&w=300&h=225&mode=fill&format=jpeg&q=80"
curl -s -o /dev/null "$HIT"
[ "$(curl -s -D - -o /dev/null "$HIT" | tr -d '\r' | awk -F': ' '/^X-Cache/{print $2}')" = HIT ]
for r in $(seq "$ROUNDS"); do
  wrk -t2 -c64 -d"$DURATION" --latency "http://127.0.0.1:$NGINX_STATIC_PORT/big.jpg" > "$out/hit-nginx-$r.txt"
  wrk -t2 -c64 -d"$DURATION" --latency "$HIT" > "$out/hit-aspect-$r.txt"
done
stop_pidfile "$RUN/nginx-static.pid"
python3 - "$out" "$ROUNDS" "$DURATION" <<'PY'
import re, statistics, sys
out, rounds, duration = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v); x = float(m.group(1))
    return x / 1000 if m.group(2) == "us" else x * 1000 if m.group(2) == "s" else x
def med(name):
    rps, p99 = [], []
    for r in range(1, rounds + 1):
        t = open(f"{out}/hit-{name}-{r}.txt").read()
        rps.append(float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1)))
        p99.append(ms(re.search(r"^\s+99%\s+(\S+)", t, re.M).group(1)))
    return statistics.median(rps), statistics.median(p99)
n, a = med("nginx"), med("aspect")
print(f"### Cache hit: 300×225 thumbnail of big.jpg, wrk -t2 -c64, {rounds} alternating rounds of {duration}, medians\n")
print("| server | req/s | p99 ms |\n|---|---:|---:|")
print(f"| nginx, the same bytes as a static file | {n[0]:,.0f} | {n[1]:.2f} |")
print(f"| Aspect, X-Cache: HIT (sendfile) | {a[0]:,.0f} | {a[1]:.2f} |")
print(f"\nAspect / nginx: {a[0] / n[0]:.2f}× (goal: at least 0.80×)\n")
PY
fi
[ "${HITS_ONLY:-0}" = 1 ] && exit 0

# 2 and 3. Misses. The peers through their own bench.sh (wrk -c8 and -c16, each response
# checked against a libvips reference); Aspect the same way by hand, with its cache off
# and a unique key per request (bg= changes the key, not the work: fill on an opaque JPEG
# has no background), since identical requests in flight are rendered once by design.
start_aspect 18091 0
cat > "$out/unique.lua" <<'LUA'
local n = 0
function setup(thread) n = n + 1; thread:set("id", n) end
function init(args) count = 0 end
function request()
  count = count + 1
  return wrk.format(nil, string.format(
    "/thumb?src=@PHOTO@&w=300&h=225&mode=fill&format=jpeg&q=80&bg=%06x", id * 1000000 + count))
end
LUA
sed -i "s/@PHOTO@/$PHOTO/" "$out/unique.lua"
VPY="$OPT/pyvips/bin/python"
ticks() { local s=0 p; for p in $(group_pids "$1"); do s=$((s + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$s"; }
# wrk output -> "requests req/s p50-ms p99-ms non-2xx+socket-errors"
summary() {
  python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v); x = float(m.group(1))
    return x / 1000 if m.group(2) == "us" else x * 1000 if m.group(2) == "s" else x
errs = sum(int(x) for x in re.findall(r"Non-2xx or 3xx responses: (\d+)", t))
errs += sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", t))
print(re.search(r"(\d+) requests in", t).group(1), re.search(r"Requests/sec:\s+([\d.]+)", t).group(1),
      "%.1f" % ms(re.search(r"^\s+50%\s+(\S+)", t, re.M).group(1)),
      "%.1f" % ms(re.search(r"^\s+99%\s+(\S+)", t, re.M).group(1)), errs)
PY
}
curl -s -o "$out/aspect-miss.jpg" "http://127.0.0.1:18091/thumb?src=$PHOTO&w=300&h=225&mode=fill&format=jpeg&q=80&bg=000001"
# verify.py runs in the pyvips peer's venv, made here when no run has made it yet.
need_venv "$OPT/pyvips" "pyvips==$PYVIPS_VERSION"
check=$("$VPY" "$PEERS/verify.py" "$out/aspect-miss.jpg" "$IMAGES/$PHOTO")
pg="${pids[-1]}"
for conns in 8 16; do
  [ "$ALL" = 1 ] || break
  echo "### Cache miss: $PHOTO → 300×225 fill, JPEG q80, wrk -t2 -c$conns -d10s"; echo
  BENCH_CONNS=$conns BENCH_IMAGES=$PHOTO BENCH_FLOOR=0 BENCH_PEERS="nginx-imagefilter thumbor pyvips" \
    "$PEERS/bench.sh" 2>"$out/peers-$conns.log" | sed -n '/^| peer/,/^$/p' | sed '/^$/d'
  wrk -t2 -c"$conns" -d3s --timeout 30s -s "$out/unique.lua" http://127.0.0.1:18091 >/dev/null 2>&1
  reset_peak "$pg"
  t0=$(ticks "$pg")
  wrk -t2 -c"$conns" -d10s --latency --timeout 30s -s "$out/unique.lua" http://127.0.0.1:18091 > "$out/miss-$conns.txt"
  t1=$(ticks "$pg")
  read -r reqs rps p50 p99 err < <(summary "$out/miss-$conns.txt")
  rss=$(awk -v k="$(peak_rss_kb "$pg")" 'BEGIN{printf "%.0f", k/1024}')
  cpu=$(awk -v d=$((t1 - t0)) -v n="$reqs" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.1f", 1000*d/hz/n}')
  IFS=$'\t' read -r size fmt bands dref dnor verdict <<< "$check"
  echo "| aspect (cache off, unique keys) | $PHOTO | $rps | $p50 | $p99 | $err | $rss | $cpu | $size $verdict, Δref $dref |"
  echo
done

# 4. Misses side by side: Aspect (cache off, unique keys) and the pyvips server, alternating.
"$PEERS/start-pyvips.sh" >&2
ppg=$(cat "$RUN/pyvips.pid")
start_aspect 18092 0 ASPECT_IMAGES_FASTSHRINKONLOAD=false
lpg="${pids[-1]}"
idle() { awk '/^cpu /{print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8}' /proc/stat; }
miss_round() {  # name url pgid extra-wrk-args... -> "req/s cpu-ms/req idle%"
  local name="$1" url="$2" pg="$3"; shift 3
  local i0 a0 i1 a1 t0 t1 reqs rps rest
  wrk -t2 -c8 -d2s --timeout 30s "$@" "$url" >/dev/null 2>&1
  read -r i0 a0 < <(idle); t0=$(ticks "$pg")
  wrk -t2 -c8 -d"$DURATION" --latency --timeout 30s "$@" "$url" > "$out/alt-$name.txt"
  read -r i1 a1 < <(idle); t1=$(ticks "$pg")
  read -r reqs rps rest < <(summary "$out/alt-$name.txt")
  awk -v r="$rps" -v n="$reqs" -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v i=$((i1 - i0)) -v a=$((a1 - a0)) \
    'BEGIN{printf "%s %.1f %.1f\n", r, 1000*d/hz/n, 100*i/a}'
}
for r in $(seq "$ROUNDS"); do
  miss_round pyvips "http://127.0.0.1:$PYVIPS_PORT/300x225/$PHOTO" "$ppg" >> "$out/alt-pyvips.rows"
  miss_round aspect http://127.0.0.1:18091 "$pg" -s "$out/unique.lua" >> "$out/alt-aspect.rows"
  miss_round libvips http://127.0.0.1:18092 "$lpg" -s "$out/unique.lua" >> "$out/alt-libvips.rows"
done
python3 - "$out" "$ROUNDS" "$DURATION" "$PHOTO" <<'PY'
import statistics, sys
out, rounds, duration, photo = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def med(name):
    rows = [list(map(float, l.split())) for l in open(f"{out}/alt-{name}.rows")]
    return [statistics.median(col) for col in zip(*rows)], [r[0] for r in rows]
p, pr = med("pyvips"); a, ar = med("aspect"); l, lr = med("libvips")
print(f"### Cache miss side by side: {photo} → 300×225 fill, wrk -t2 -c8, {rounds} alternating rounds of {duration}, medians\n")
print("| server | req/s | rounds | server CPU ms/req | machine idle |\n|---|---:|---|---:|---:|")
print(f"| pyvips server | {p[0]:.1f} | {', '.join(f'{x:.1f}' for x in pr)} | {p[1]:.1f} | {p[2]:.1f}% |")
print(f"| Aspect (cache off, unique keys) | {a[0]:.1f} | {', '.join(f'{x:.1f}' for x in ar)} | {a[1]:.1f} | {a[2]:.1f}% |")
print(f"| Aspect, images.fastShrinkOnLoad=false | {l[0]:.1f} | {', '.join(f'{x:.1f}' for x in lr)} | {l[1]:.1f} | {l[2]:.1f}% |")
print(f"\nMisses, Aspect / pyvips: {a[0] / p[0]:.2f}× (goal: at least 1.0×); "
      f"with libvips' shrink-on-load rule: {l[0] / p[0]:.2f}×\n")
PY
