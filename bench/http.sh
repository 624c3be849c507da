#!/usr/bin/env bash
# HTTP benchmark: wrk on Aspect's /healthz at -c64 keep-alive beside nginx serving a small
# static file (the team's ../shared/peers/start-nginx-static.sh), in one run. Rounds
# alternate the servers; the table gives medians of the rounds.
#
#   bash bench/http.sh
# Env: ROUNDS (3), DURATION (10s), CONNS (64), THREADS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; DURATION="${DURATION:-10s}"; CONNS="${CONNS:-64}"; THREADS="${THREADS:-2}"
PEERS=../shared/peers

bash scripts/setup.sh
. "$PEERS/common.sh"
need_apt wrk curl nginx-light
swift build -c release --product aspect >/dev/null

"$PEERS/start-nginx-static.sh" >&2
printf 'ok\n' > "$THUMBS/healthz"   # the small static file nginx serves
out=$(mktemp -d); echo "raw output: $out" >&2
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; stop_pidfile "$RUN/nginx-static.pid"; [ -n "${KEEP:-}" ] || rm -rf "$out"; }
trap cleanup EXIT

# Aspect, access log off as nginx's is, with one event loop per core (the default) and with one.
start_aspect() {  # port loops access-log
  ASPECT_SERVER_EVENTLOOPS="$2" ASPECT_LOG_ACCESS="$3" .build/release/aspect serve --port "$1" \
    --images "$PWD" --cache-dir "$out/cache" >/dev/null 2>"$out/aspect-$1.log" &
  pids+=($!)
  wait_http "http://127.0.0.1:$1/healthz" 20
}
start_aspect 18080 0 false
start_aspect 18081 1 false
start_aspect 18082 0 true

targets=("nginx static file|http://127.0.0.1:$NGINX_STATIC_PORT/healthz"
         "Aspect /healthz, a loop per core|http://127.0.0.1:18080/healthz"
         "Aspect /healthz, one loop|http://127.0.0.1:18081/healthz"
         "Aspect /healthz, a loop per core, access log on (to /dev/null)|http://127.0.0.1:18082/healthz")
for r in $(seq "$ROUNDS"); do
  for i in "${!targets[@]}"; do
    url="${targets[$i]#*|}"
    wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "$url" > "$out/wrk-$i-$r.txt"
  done
done
python3 - "$out" "$ROUNDS" "${#targets[@]}" "${targets[@]}" <<'PY'
import re, statistics, sys
out, rounds, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
names = [t.split("|")[0] for t in sys.argv[4:4 + n]]
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v)
    x = float(m.group(1))
    return x / 1000 if m.group(2) == "us" else x * 1000 if m.group(2) == "s" else x
rows = []
for i in range(n):
    rps, p50, p99, errs = [], [], [], 0
    for r in range(1, rounds + 1):
        t = open(f"{out}/wrk-{i}-{r}.txt").read()
        rps.append(float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1)))
        p50.append(ms(re.search(r"^\s+50%\s+(\S+)", t, re.M).group(1)))
        p99.append(ms(re.search(r"^\s+99%\s+(\S+)", t, re.M).group(1)))
        e = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
        errs += int(e.group(1)) if e else 0
    rows.append((names[i], statistics.median(rps), statistics.median(p50), statistics.median(p99), errs))
print("| server | req/s | p50 ms | p99 ms | non-2xx | req/s vs nginx | p99 vs nginx |")
print("|---|---:|---:|---:|---:|---:|---:|")
base = rows[0]
for name, rps, p50, p99, errs in rows:
    print(f"| {name} | {rps:,.0f} | {p50:.2f} | {p99:.2f} | {errs} | {rps / base[1]:.2f}× | {p99 / base[3]:.2f}× |")
PY
