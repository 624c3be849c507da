#!/usr/bin/env bash
# A failover with and without the shared result tier (issue 28): 3 replicas behind nginx
# (deploy/nginx/aspect.conf, ports rewritten, X-Replica added) on 24 sources × 3 sizes;
# the replica holding the most sources is killed and a new one with an empty disk takes
# its port; then every variant of its sources is asked again. Counted: how many are
# rendered again. With the tier, also the time of a hit on the new replica, local and
# from the shared tier, beside a render. S3 is moto's server (no authentication) from
# a venv the script makes.
#
#   bash bench/failover.sh
# Env: N (20 timings of each kind).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
N="${N:-20}"
bash scripts/setup.sh
missing=()
for p in nginx-light curl python3-venv; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
venv=.build/bench-venv
[ -x "$venv/bin/moto_server" ] || { python3 -m venv "$venv"; "$venv/bin/pip" install -q "moto[server]==5.2.5"; }
swift build -c release --product aspect >/dev/null
BIN="$(swift build -c release --show-bin-path)/aspect"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
out=$(mktemp -d); echo "raw output: $out" >&2
PORTS=(18531 18532 18533); FRONT=18530; MOTO=18534

many_sources

pids=(0 0 0); moto_pid=0
cleanup() {
  for p in "${pids[@]}" "$moto_pid"; do [ "$p" != 0 ] && kill "$p" 2>/dev/null || true; done
  [ -f "$out/nginx/nginx.pid" ] && kill "$(cat "$out/nginx/nginx.pid")" 2>/dev/null || true
}
trap cleanup EXIT
"$venv/bin/moto_server" -H 127.0.0.1 -p "$MOTO" >"$out/moto.log" 2>&1 &
moto_pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$MOTO/" && break; sleep 0.1; done
curl -s -X PUT "http://127.0.0.1:$MOTO/aspect-results" >/dev/null

SHARED=""
start_replica() {  # index cache-dir
  local i=$1
  env ASPECT_LOG_ACCESS=false ASPECT_CACHE_SHARED="$SHARED" ASPECT_S3_ENDPOINT="http://127.0.0.1:$MOTO" \
    ASPECT_S3_PATHSTYLE=true AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench \
    "$BIN" serve --port "${PORTS[$i]}" --images "$out/images" --cache-dir "$2" 2>>"$out/replica-$i.log" &
  pids[$i]=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:${PORTS[$i]}/healthz" && return; sleep 0.1; done
  echo "replica $i did not start" >&2; exit 1
}
nginx_in_front "$FRONT" "${PORTS[@]}"
renders() { local s=0; for i in 0 1 2; do s=$((s + $(metric "${PORTS[$i]}" aspect_renders_total))); done; echo "$s"; }
ms() { curl -s -o /dev/null -w '%{time_total}\n' "$1" | awk '{printf "%.2f\n", $1 * 1000}'; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

echo "### Failover with and without the shared tier: 24 sources × 3 sizes behind nginx"
echo
echo "| shared tier | the killed replica's sources | their variants asked again | rendered again | share |"
echo "|---|---:|---:|---:|---:|"
for mode in without with; do
  SHARED=""; [ "$mode" = with ] && SHARED="s3://aspect-results/failover-$RANDOM/"
  for i in 0 1 2; do start_replica "$i" "$out/$mode-cache-$i"; done
  "$NGINX" -c "$out/nginx.conf" -p "$out/nginx"; sleep 0.3
  declare -A home=()
  for s in "${sources[@]}"; do
    for w in 120 200 320; do
      a=$(curl -s -o /dev/null -D - "http://127.0.0.1:$FRONT/thumb?src=$s&w=$w&format=jpeg" | tr -d '\r' | awk -F': ' 'tolower($1) == "x-replica" {print $2}')
      home[$s]=${a##*:}
    done
  done
  if [ -n "$SHARED" ]; then  # the uploads behind the answers, landed
    for _ in $(seq 100); do
      q=0; for i in 0 1 2; do q=$((q + $(metric "${PORTS[$i]}" aspect_shared_upload_queue))); done
      [ "$q" = 0 ] && break; sleep 0.1
    done
  fi
  counts=(0 0 0)
  for s in "${sources[@]}"; do for i in 0 1 2; do [ "${home[$s]}" = "${PORTS[$i]}" ] && counts[$i]=$((counts[$i] + 1)); done; done
  victim=0; for i in 1 2; do [ "${counts[$i]}" -gt "${counts[$victim]}" ] && victim=$i; done
  kill -KILL "${pids[$victim]}"; wait "${pids[$victim]}" 2>/dev/null || true
  start_replica "$victim" "$out/$mode-cache-new"   # an empty disk, the same address
  "$NGINX" -c "$out/nginx.conf" -p "$out/nginx" -s reload; sleep 1
  before=$(renders); asked=0
  for s in "${sources[@]}"; do
    [ "${home[$s]}" = "${PORTS[$victim]}" ] || continue
    for w in 120 200 320; do curl -s -o /dev/null "http://127.0.0.1:$FRONT/thumb?src=$s&w=$w&format=jpeg"; asked=$((asked + 1)); done
  done
  again=$(($(renders) - before))
  echo "| $mode | ${counts[$victim]} | $asked | $again | $(awk -v a="$again" -v n="$asked" 'BEGIN {printf "%.0f%%", 100 * a / n}') |"
  if [ "$mode" = with ]; then
    p=${PORTS[$victim]}
    # On the new replica directly: other replicas' variants (first ask: the shared tier),
    # then the same again (local hits), and sizes never asked (renders).
    k=0
    for s in "${sources[@]}"; do
      [ "${home[$s]}" = "$p" ] && continue
      for w in 120 200 320; do
        [ "$k" -lt "$N" ] || break 2
        ms "http://127.0.0.1:$p/thumb?src=$s&w=$w&format=jpeg" >> "$out/shared-hit.txt"
        ms "http://127.0.0.1:$p/thumb?src=$s&w=$w&format=jpeg" >> "$out/local-hit.txt"
        ms "http://127.0.0.1:$p/thumb?src=$s&w=$((400 + k))&format=jpeg" >> "$out/render.txt"
        k=$((k + 1))
      done
    done
  fi
  kill "$(cat "$out/nginx/nginx.pid")"; sleep 0.3
  for i in 0 1 2; do kill "${pids[$i]}" 2>/dev/null || true; wait "${pids[$i]}" 2>/dev/null || true; pids[$i]=0; done
done
echo
echo "On the new replica with the tier, $N requests of each kind (curl's total time, medians):"
echo
echo "| answer | ms (median) |"
echo "|---|---:|"
echo "| a local hit | $(median < "$out/local-hit.txt") |"
echo "| a hit from the shared tier (moto on loopback) | $(median < "$out/shared-hit.txt") |"
echo "| a render (a size not asked before) | $(median < "$out/render.txt") |"
