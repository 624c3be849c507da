#!/usr/bin/env bash
# Issue 44: slow clients against Aspect and nginx at the same connection cap, alternating.
# Debian's slowhttptest runs each attack at twice the cap (CAP, default 256: Aspect with
# server.maxConnections=CAP, nginx with 2 workers × CAP/2 worker_connections) while a plain
# client asks a small cached answer 4 times a second (curl, 1 s limit); per attack and
# server: the plain requests answered 200 within 1 s, and their p99.
#   slow read  -X: connections reading 32 bytes every 3 s through a 1-2 byte window, of a 12 MB answer
#   slowloris  -H: a header line every 5 s
#   slow body  -B: a POST whose 8 KB body comes a few bytes every 5 s
#
#   bash bench/slow.sh
# Env: CAP (256), SECONDS_EACH (40), ROUNDS (1).
set -euo pipefail
cd "$(dirname "$0")/.."
CAP="${CAP:-256}"; EACH="${SECONDS_EACH:-40}"; ROUNDS="${ROUNDS:-1}"
. bench/lib.sh
bench_start curl slowhttptest nginx-light python3
mkdir -p "$out/images" "$out/nginx/root"
"$BIN" samples "$out/images" >/dev/null
python3 - "$out/images/noise.png" <<'PY'
import os, struct, sys, zlib
# 2000×2000 RGB noise as a PNG (stored rows, compressed by zlib: noise stays ~12 MB).
w = h = 2000
raw = b"".join(b"\0" + os.urandom(w * 3) for _ in range(h))
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
APORT=8795; NPORT=8796
small="thumb?src=landscape.jpg&w=120"; big="thumb?src=noise.png&w=2000&format=png"
ASPECT_LOG_ACCESS=false ASPECT_SERVER_MAXCONNECTIONS=$CAP setsid "$BIN" serve --port $APORT --images "$out/images" \
  --cache-dir "$out/cache" >/dev/null 2>"$out/aspect.log" &
apid=$!
trap 'kill -TERM -- "-$apid" 2>/dev/null || true; [ -f "$out/nginx/nginx.pid" ] && kill "$(cat "$out/nginx/nginx.pid")" 2>/dev/null || true' EXIT
wait_http "http://127.0.0.1:$APORT/healthz" 30
# The same two answers as files for nginx.
curl -s -o "$out/nginx/root/small.jpg" "http://127.0.0.1:$APORT/$small"
curl -s -o "$out/nginx/root/big.png" "http://127.0.0.1:$APORT/$big"
cat > "$out/nginx/nginx.conf" <<CONF
daemon off;
worker_processes 2;
pid $out/nginx/nginx.pid;
error_log $out/nginx/error.log crit;
events { worker_connections $((CAP / 2)); }
http {
  access_log off;
  sendfile on;
  client_body_temp_path $out/nginx/body; proxy_temp_path $out/nginx/proxy;
  fastcgi_temp_path $out/nginx/fastcgi; uwsgi_temp_path $out/nginx/uwsgi; scgi_temp_path $out/nginx/scgi;
  server { listen 127.0.0.1:$NPORT; root $out/nginx/root; }
}
CONF
setsid nginx -p "$out/nginx" -c "$out/nginx/nginx.conf" 2>>"$out/nginx/error.log" &
wait_http "http://127.0.0.1:$NPORT/small.jpg" 20

# probe URL SECONDS: a request every 0.25 s; prints "served asked p99_ms".
probe() {
  local url=$1 n=$(( $2 * 4 )) f="$out/probe.txt"; : > "$f"
  for _ in $(seq "$n"); do
    { curl -s -o /dev/null --max-time 1 -w '%{http_code} %{time_total}\n' "$url" >> "$f" 2>/dev/null || true; } &
    sleep 0.25
  done
  wait
  python3 - "$f" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
ok = [float(t) for s, t in rows if s == "200" and float(t) <= 1]
times = sorted(float(t) for _, t in rows)
p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000 if times else 0
print(len(ok), len(rows), round(p99))
PY
}

attack() { # KIND URL: slowhttptest at twice the cap for EACH seconds, in the background
  local kind=$1 url=$2 c=$(( CAP * 2 ))
  case $kind in
    read) slowhttptest -X -c $c -r 200 -w 1 -y 2 -n 3 -z 32 -k 3 -l "$EACH" -u "$url" ;;
    loris) slowhttptest -H -c $c -r 200 -i 5 -l "$EACH" -u "$url" ;;
    body) slowhttptest -B -c $c -r 200 -i 5 -s 8192 -l "$EACH" -u "$url" ;;
  esac >"$out/slowhttptest-$kind.log" 2>&1 &
  echo $!
}

echo "### Slow clients at twice the cap ($CAP connections; $EACH s each; a plain request every 0.25 s)"
echo
echo "| attack | Aspect: served within 1 s | Aspect p99 | nginx: served within 1 s | nginx p99 |"
echo "|---|---:|---:|---:|---:|"
for r in $(seq "$ROUNDS"); do
  for kind in read loris body; do
    row="| $kind |"
    for side in aspect nginx; do
      if [ $side = aspect ]; then base="http://127.0.0.1:$APORT"; target="$base/$big"; plain="$base/$small"
      else base="http://127.0.0.1:$NPORT"; target="$base/big.png"; plain="$base/small.jpg"; fi
      [ $kind = read ] || target="$plain"
      a=$(attack $kind "$target")
      sleep 3  # the table fills
      read -r ok asked p99 < <(probe "$plain" $(( EACH - 6 )))
      wait "$a" 2>/dev/null || true
      sleep 2
      row="$row $ok / $asked | $p99 ms |"
    done
    echo "$row"
  done
done
echo
echo "Aspect's counters after the run:"
curl -s "http://127.0.0.1:$APORT/metrics" | grep -E '^aspect_(connections_(shed|refused)|slow_readers_cut)' || true
