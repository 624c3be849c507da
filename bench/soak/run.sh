#!/usr/bin/env bash
# Soak: mixed traffic against one `aspect serve` for DURATION seconds (default 300):
# cache hits (wrk -c16 over 20 URLs), misses with unique keys (wrk -c4, into a 20 MB cache
# that keeps evicting), and bad traffic (abuse.py: malformed and invalid requests, slow
# clients past the header timeout, clients leaving mid-response). Reports requests and
# statuses, 5xx other than the expected 503/504, RSS and open descriptors after warm-up
# and at the end.
#   bash bench/soak/run.sh [DURATION]
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION="${1:-300}"
bash scripts/setup.sh
command -v wrk >/dev/null || { sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo; $sudo apt-get install -y -qq wrk >/dev/null; }
swift build -c release --product aspect >/dev/null
BIN="$(swift build -c release --show-bin-path)/aspect"
out=$(mktemp -d); echo "raw output: $out" >&2
"$BIN" samples "$out/images" >/dev/null
ASPECT_LOG_ACCESS=false ASPECT_CACHE_MAXBYTES=20MB ASPECT_SERVER_QUEUEDEPTH=16 ASPECT_SERVER_HEADERTIMEOUTMS=2000 \
  "$BIN" serve --port 18300 --images "$out/images" --cache-dir "$out/cache" 2>"$out/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:18300/healthz && break; sleep 0.1; done
rss() { awk '/^VmRSS:/{print $2}' "/proc/$pid/status"; }
fds() { ls "/proc/$pid/fd" | wc -l; }
# Cached results held open for hits (cache.openFiles): their number follows the traffic
# (evictions drop some, hits open others), so they are counted apart from the rest.
held() { find "/proc/$pid/fd" -lname "$out/cache/*" 2>/dev/null | wc -l; }
# Warm-up: every kind of traffic for 10 s, then the starting figures.
wrk -t1 -c16 -d10s -s bench/soak/statuses.lua http://127.0.0.1:18300 -- hit >/dev/null
wrk -t1 -c4 -d10s -s bench/soak/statuses.lua http://127.0.0.1:18300 -- miss >/dev/null
sleep 3
rss0=$(rss); fds0=$(fds); held0=$(held)
wrk -t1 -c16 -d"${DURATION}s" --timeout 30s -s bench/soak/statuses.lua http://127.0.0.1:18300 -- hit > "$out/hit.txt" &
w1=$!
wrk -t1 -c4 -d"${DURATION}s" --timeout 30s -s bench/soak/statuses.lua http://127.0.0.1:18300 -- miss > "$out/miss.txt" &
w2=$!
python3 bench/soak/abuse.py 18300 "$DURATION" > "$out/abuse.txt" &
w3=$!
# Half-way: the cache (20 MB, about 8,000 entries) has filled by then, so mid → end tells
# growth that goes on from growth up to the caps.
sleep $((DURATION / 2)); rssmid=$(rss)
wait $w1 $w2 $w3
sleep 5  # let slow clients and timeouts settle
rss1=$(rss); fds1=$(fds); held1=$(held)
curl -s http://127.0.0.1:18300/metrics > "$out/metrics.txt"
alive=$(kill -0 $pid 2>/dev/null && echo yes || echo no)
echo "### Soak: ${DURATION} s of mixed traffic on one aspect serve (default workers: two per core, queueDepth 16, 20 MB cache)"
echo
echo "| traffic | requests | statuses |"
echo "|---|---:|---|"
for k in hit miss; do
  total=$(awk '/ requests in /{print $1}' "$out/$k.txt")
  st=$(awk '/^status /{printf "%s×%s ", $2, $3}' "$out/$k.txt")
  echo "| $k (wrk) | $total | $st|"
done
echo "| bad, slow, leaving (abuse.py) | $(awk '{s+=$NF} END{print s}' "$out/abuse.txt") | $(awk '{printf "%s×%s ", $1, $2}' "$out/abuse.txt")|"
echo
unexpected=$(cat "$out/hit.txt" "$out/miss.txt" | awk '/^status /{ if ($2 >= 500 && $2 != 503 && $2 != 504) s += $3 } END{print s+0}')
unexpected=$((unexpected + $(awk '$1 ~ /->5/ && $1 !~ /->50[34]/ {s+=$2} END{print s+0}' "$out/abuse.txt")))
echo "- 5xx other than 503/504: **$unexpected** (goal 0)"
echo "- RSS after warm-up $((rss0 / 1024)) MB, at the end $((rss1 / 1024)) MB: $(awk -v a="$rss0" -v b="$rss1" 'BEGIN{printf "%+.1f%%", 100*(b-a)/a}') (goal: within 10%); half-way $((rssmid / 1024)) MB, so half-way → end $(awk -v a="$rssmid" -v b="$rss1" 'BEGIN{printf "%+.1f%%", 100*(b-a)/a}')"
echo "- open descriptors after warm-up $fds0 ($held0 of them cached results held open for hits), at the end $fds1 ($held1)"
echo "- open descriptors other than held cache files: $((fds0 - held0)) → $((fds1 - held1)) (goal: equal)"
echo "- the server is still running: $alive; cache: $(awk '/^aspect_cache_entries /{e=$2} /^aspect_cache_bytes /{b=$2} /^aspect_cache_evictions_total /{v=$2} END{printf "%d entries, %d bytes, %d evictions", e, b, v}' "$out/metrics.txt")"
