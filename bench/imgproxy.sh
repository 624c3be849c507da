#!/usr/bin/env bash
# imgproxy's URL format beside the native request it means, in one run of one server:
# hits (wrk -t2 -c64 keep-alive on the same cached result, one URL each way, rounds
# alternating) and misses (a fresh size each request, so each one renders; the dialect
# and the native URL alternating; curl's total time, medians).
#
#   bash bench/imgproxy.sh
# Env: ROUNDS (5), DURATION (8s), CONNS (64), MISSES (40 each way).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; DURATION="${DURATION:-8s}"; CONNS="${CONNS:-64}"; MISSES="${MISSES:-40}"
PEERS="$(cd ../shared/peers && pwd)"
bash scripts/setup.sh
. "$PEERS/common.sh"
need_apt wrk curl
swift build -c release --product aspect >/dev/null
BIN="$PWD/$(swift build -c release --show-bin-path | sed "s|^$PWD/||")/aspect"
out=$(mktemp -d); echo "raw output: $out" >&2
[ -f "$IMAGES/big.jpg" ] || "$PEERS/make-corpus.sh" >/dev/null
KEY=736563726574; SALT=68656C6C6F
pid=""
cleanup() { [ -z "$pid" ] || kill -TERM -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; }
trap cleanup EXIT
env ASPECT_LOG_ACCESS=false ASPECT_IMGPROXY_ENABLED=true ASPECT_IMGPROXY_KEY=$KEY ASPECT_IMGPROXY_SALT=$SALT \
  setsid "$BIN" serve --port 18195 --images "$IMAGES" --cache-dir "$out/cache" >/dev/null 2>"$out/aspect.log" &
pid=$!
wait_http "http://127.0.0.1:18195/healthz" 30
sign() {  # the signed dialect path of an unsigned one
  python3 -c 'import hmac,hashlib,base64,sys
m=hmac.new(bytes.fromhex(sys.argv[1]),bytes.fromhex(sys.argv[2])+sys.argv[3].encode(),hashlib.sha256).digest()
print("/"+base64.urlsafe_b64encode(m).rstrip(b"=").decode()+sys.argv[3])' "$KEY" "$SALT" "$1"
}
native() { echo "/thumb?src=big.jpg&w=$1&h=$2&mode=fill&upscale=1&format=jpeg&q=80"; }
dialect() { sign "/rs:fill:$1:$2:1/q:80/plain/big.jpg@jpg"; }
base="http://127.0.0.1:18195"
# Hits: the same entry both ways (checked: one ETag).
N=$(native 300 225); D=$(dialect 300 225)
curl -s -o /dev/null "$base$N"
etag() { curl -s -D - -o /dev/null "$base$1" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}'; }
[ "$(etag "$N")" = "$(etag "$D")" ] || { echo "the dialect URL is not the native entry" >&2; exit 1; }
for r in $(seq "$ROUNDS"); do
  wrk -t2 -c"$CONNS" -d"$DURATION" --latency "$base$N" > "$out/wrk-native-$r.txt"
  wrk -t2 -c"$CONNS" -d"$DURATION" --latency "$base$D" > "$out/wrk-dialect-$r.txt"
done
# Misses: a size not asked before, alternating.
for i in $(seq "$MISSES"); do
  w=$((400 + 2 * i)); h=$((300 + 2 * i))
  curl -s -o /dev/null -w '%{time_total}\n' "$base$(native $w $h)" >> "$out/miss-native.txt"
  curl -s -o /dev/null -w '%{time_total}\n' "$base$(dialect $((w + 1)) $((h + 1)))" >> "$out/miss-dialect.txt"
done
grep -c "cache=MISS" "$out/aspect.log" >/dev/null 2>&1 || true
echo "### imgproxy URLs beside native ones: big.jpg, fill 300×225 (hits: wrk -t2 -c$CONNS, $ROUNDS alternating rounds of $DURATION; misses: $MISSES each, alternating, a fresh size each)"
echo
python3 - "$out" "$ROUNDS" <<'PY'
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rps(kind):
    return [float(re.search(r"Requests/sec:\s+([\d.]+)", open(f"{out}/wrk-{kind}-{r}.txt").read()).group(1))
            for r in range(1, rounds + 1)]
def miss(kind):
    return [float(x) * 1000 for x in open(f"{out}/miss-{kind}.txt").read().split()]
n, d = rps("native"), rps("dialect")
mn, md = miss("native"), miss("dialect")
print("| | native `/thumb?…` | imgproxy `/SIG/rs:fill:…` | dialect / native |")
print("|---|---:|---:|---:|")
print(f"| hits, req/s (median; range) | {statistics.median(n):,.0f} ({min(n):,.0f}–{max(n):,.0f}) | "
      f"{statistics.median(d):,.0f} ({min(d):,.0f}–{max(d):,.0f}) | {statistics.median(d) / statistics.median(n):.2f}× |")
print(f"| misses, ms (median) | {statistics.median(mn):.1f} | {statistics.median(md):.1f} | "
      f"{statistics.median(md) / statistics.median(mn):.2f}× |")
PY
