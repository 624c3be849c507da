#!/usr/bin/env bash
# Scale-out on one machine: 3 Aspect replicas behind Debian's nginx with
# deploy/nginx/aspect.conf (its replica and listen ports rewritten to free loopback ports,
# and the replica's address added as a response header, for this check only). Shows:
#   1. affinity: every request for one source reaches the same replica;
#   2. failover: a replica killed (SIGKILL) loses no request, nginx retries the next one;
#   3. miss throughput, unique keys, 3 replicas vs 1 behind the same nginx (wrk -c16);
#   4. the hit ratio after warm-up, over a fixed set of URLs.
#   bash bench/scale-out.sh        (prints a markdown report; DURATION=10s by default)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
DURATION="${DURATION:-10s}"
bash scripts/setup.sh
missing=()
for p in nginx-light wrk curl; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
swift build -c release --product aspect >/dev/null
BIN="$(swift build -c release --show-bin-path)/aspect"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
out=$(mktemp -d); echo "raw output: $out" >&2
PORTS=(18511 18512 18513); FRONT=18510

many_sources

pids=(0 0 0)
start_replica() {  # index
  local i=$1
  ASPECT_LOG_ACCESS=false "$BIN" serve --port "${PORTS[$i]}" --images "$out/images" --cache-dir "$out/cache-$i" \
    2>>"$out/replica-$i.log" &
  pids[$i]=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:${PORTS[$i]}/healthz" && return; sleep 0.1; done
  echo "replica $i did not start" >&2; exit 1
}
nginx_conf() {  # replica-count -> $out/aspect.conf and $out/nginx.conf
  nginx_in_front "$FRONT" "${PORTS[@]}"
  [ "$1" -eq 1 ] && sed -i -e "/127.0.0.1:${PORTS[1]}/d" -e "/127.0.0.1:${PORTS[2]}/d" "$out/aspect.conf"
  return 0
}
cleanup() {
  for p in "${pids[@]}"; do [ "$p" != 0 ] && kill "$p" 2>/dev/null || true; done
  [ -f "$out/nginx/nginx.pid" ] && kill "$(cat "$out/nginx/nginx.pid")" 2>/dev/null || true
}
trap cleanup EXIT
start_nginx() { nginx_conf "$1"; "$NGINX" -c "$out/nginx.conf" -p "$out/nginx"; sleep 0.3; }
reload_nginx() { nginx_conf "$1"; "$NGINX" -c "$out/nginx.conf" -p "$out/nginx" -s reload; sleep 1; }
metric() {  # replica-index name-or-name{labels-prefix -> value (summed over the matching lines)
  curl -s "http://127.0.0.1:${PORTS[$1]}/metrics" | awk -v n="$2" '$1 == n || index($1, n) == 1 && substr($1, length(n) + 1, 1) ~ /[{,]/ {s += $2} END {print s + 0}'
}
replica_of() {  # upstream address -> replica index
  local a=$1; [ -n "$a" ] || { echo "?"; return; }; for i in 0 1 2; do [ "$a" = "127.0.0.1:${PORTS[$i]}" ] && { echo "$i"; return; }; done; echo "?"
}

for i in 0 1 2; do start_replica "$i"; done
start_nginx 3

echo "### 1. Affinity: 24 sources × 3 sizes × 2 rounds through nginx (hash \$arg_src consistent)"
echo
declare -A home
moved=0
for round in 1 2; do
  for s in "${sources[@]}"; do
    for w in 120 200 320; do
      a=$(curl -s -o /dev/null -D - "http://127.0.0.1:$FRONT/thumb?src=$s&w=$w&ratio=4:3&mode=fill" | tr -d '\r' | awk -F': ' 'tolower($1) == "x-replica" {print $2}')
      r=$(replica_of "$a")
      if [ -z "${home[$s]:-}" ]; then home[$s]=$r; elif [ "${home[$s]}" != "$r" ]; then moved=$((moved + 1)); fi
    done
  done
done
counts=(0 0 0)
for s in "${sources[@]}"; do counts[${home[$s]}]=$((counts[${home[$s]}] + 1)); done
echo "| replica | sources | /thumb requests it answered (its /metrics) |"
echo "|---|---:|---:|"
for i in 0 1 2; do echo "| $i (:${PORTS[$i]}) | ${counts[$i]} | $(metric "$i" 'aspect_requests_total{route="/thumb"') |"; done
echo
echo "Requests that reached a replica other than their source's first: **$moved** of 144 (goal 0)."
echo

echo "### 2. Failover: the replica with the most sources killed (SIGKILL), then every source once"
echo
victim=0; for i in 1 2; do [ "${counts[$i]}" -gt "${counts[$victim]}" ] && victim=$i; done
kill -KILL "${pids[$victim]}"; wait "${pids[$victim]}" 2>/dev/null || true; pids[$victim]=0
failed=0; moved_to=""
for s in "${sources[@]}"; do
  read -r code a < <(curl -s -o /dev/null -D - -w '%{http_code}\n' "http://127.0.0.1:$FRONT/thumb?src=$s&w=200&ratio=4:3&mode=fill" \
    | tr -d '\r' | awk -F': ' 'tolower($1) == "x-replica" {addr = $2} /^[0-9][0-9][0-9]$/ {code = $1} END {print code, addr}')
  [ "$code" = 200 ] || failed=$((failed + 1))
  if [ "${home[$s]}" = "$victim" ]; then moved_to="$moved_to $(replica_of "${a##*, }")"; fi
done
echo "Replica $victim (${counts[$victim]} sources) killed; of 24 requests, **$failed** failed (goal 0)."
echo "Its sources were answered by:$(echo "$moved_to" | tr ' ' '\n' | sed '/^$/d' | sort | uniq -c | awk '{printf " replica %s ×%s,", $2, $1}' | sed 's/,$//')."
echo "(nginx's X-Replica lists the dead replica first and the one that answered after it, for the first requests.)"
echo
start_replica "$victim"
# A reload starts nginx's workers afresh: the revived replica is not held out for the rest
# of its fail_timeout.
reload_nginx 3

echo "### 3. Miss throughput, unique keys, wrk -t2 -c16 -d$DURATION through nginx"
echo
cat > "$out/unique.lua" <<LUA
local sources = { $(printf '"%s",' "${sources[@]}") }
local n = 0
function setup(thread) n = n + 1; thread:set("id", n) end
-- args[1]: the run's number, so no two runs (nor two threads) ask for the same key.
function init(args) count = 0; run = tonumber(args[1]) end
function request()
  count = count + 1
  local s = sources[(count % #sources) + 1]
  return wrk.format(nil, string.format("/thumb?src=%s&w=300&ratio=4:3&mode=fill&format=jpeg&bg=%08x",
    s, run * 100000000 + id * 10000000 + count))
end
LUA
renders() { for i in 0 1 2; do metric "$i" aspect_renders_total; done; }
run_misses() {  # label replica-count
  local before after rps bad
  mapfile -t before < <(renders)
  wrk -t2 -c16 -d"$DURATION" --timeout 30s -s "$out/unique.lua" "http://127.0.0.1:$FRONT" -- "$2" > "$out/misses-$2.txt"
  mapfile -t after < <(renders)
  rps=$(awk '/Requests\/sec/ {print $2}' "$out/misses-$2.txt")
  bad=$(awk '/Non-2xx/ {print $NF} END {}' "$out/misses-$2.txt"); bad=${bad:-0}
  echo "| $1 | $rps | $bad | $((after[0] - before[0])) | $((after[1] - before[1])) | $((after[2] - before[2])) |"
}
echo "| behind nginx | req/s | non-2xx | renders, replica 0 | replica 1 | replica 2 |"
echo "|---|---:|---:|---:|---:|---:|"
run_misses "3 replicas" 3
reload_nginx 1
run_misses "1 replica (0)" 1
reload_nginx 3
echo
echo "This machine has 2 cores: one replica's workers (two per core) already keep both busy,"
echo "so 3 replicas share the same 2 cores and the total stays flat; on 3 machines it would not."
echo

echo "### 4. Hit ratio after warm-up: 24 sources × 5 variants, wrk -c16 -d$DURATION over them"
echo
cat > "$out/fixed.lua" <<LUA
local sources = { $(printf '"%s",' "${sources[@]}") }
local widths = { 100, 160, 240, 320, 480 }
local count = 0
function request()
  count = count + 1
  local s = sources[(count % #sources) + 1]
  local w = widths[(math.floor(count / #sources) % #widths) + 1]
  return wrk.format(nil, string.format("/thumb?src=%s&w=%d&ratio=1&mode=fill&format=jpeg", s, w))
end
LUA
wrk -t1 -c4 -d3s -s "$out/fixed.lua" "http://127.0.0.1:$FRONT" >/dev/null   # warm-up
h0=0; m0=0; for i in 0 1 2; do h0=$((h0 + $(metric "$i" aspect_cache_hits_total))); m0=$((m0 + $(metric "$i" aspect_cache_misses_total))); done
rps=$(wrk -t2 -c16 -d"$DURATION" -s "$out/fixed.lua" "http://127.0.0.1:$FRONT" | awk '/Requests\/sec/ {print $2}')
h1=0; m1=0; for i in 0 1 2; do h1=$((h1 + $(metric "$i" aspect_cache_hits_total))); m1=$((m1 + $(metric "$i" aspect_cache_misses_total))); done
hits=$((h1 - h0)); misses=$((m1 - m0))
echo "After warm-up: $hits hits, $misses misses: hit ratio **$(awk -v h=$hits -v m=$misses 'BEGIN {printf "%.4f", h / (h + m)}')**, $rps req/s through nginx."
