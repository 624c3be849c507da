#!/usr/bin/env bash
# Issue 45: imgproxy's enforce_thumbnail (the native thumbnail=embedded) on a HEIF with an
# embedded thumbnail, beside the same URL decoding the picture: misses (the result cache
# off), a 600-px fit of big.jpg (6028×3391) encoded by libheif's heif-enc with a 320-px
# thumbnail. (For a result no larger than the thumbnail libvips takes the thumbnail by
# itself; eth:1 takes it whatever the size, as imgproxy does, and the result is then the
# thumbnail's size.) ROUNDS rounds of N requests each, alternating; median milliseconds.
#
#   bash bench/embedded-thumbnail.sh
# Env: ROUNDS (3), N (10).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; N="${N:-10}"
. bench/lib.sh
bench_start curl libheif-examples
bash scripts/fetch-photos.sh >/dev/null
mkdir -p "$out/images"
heif-enc -q 80 -t 320 -o "$out/images/big.heic" .build/photos/big.jpg >/dev/null
port=8797
ASPECT_LOG_ACCESS=false ASPECT_CACHE_MAXBYTES=0 ASPECT_IMGPROXY_ENABLED=true setsid "$BIN" serve --port $port \
  --images "$out/images" --cache-dir "$out/cache" >/dev/null 2>"$out/aspect.log" &
pid=$!
trap 'kill -TERM -- "-$pid" 2>/dev/null || true' EXIT
wait_http "http://127.0.0.1:$port/healthz" 30
base="http://127.0.0.1:$port/insecure"
: > "$out/eth.txt"; : > "$out/main.txt"
for r in $(seq "$ROUNDS"); do
  for i in $(seq "$N"); do
    time_of "$base/eth:1/rs:fit:$((590 + i)):$((590 + i))/plain/big.heic@jpg" >> "$out/eth.txt"
    time_of "$base/rs:fit:$((590 + i)):$((590 + i))/plain/big.heic@jpg" >> "$out/main.txt"
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
e=$(median < "$out/eth.txt"); m=$(median < "$out/main.txt")
echo "### A 600-px fit of a 6028×3391 HEIF with a 320-px embedded thumbnail, misses (cache off)"
echo
printf '| | median |\n|---|---:|\n| eth:1 (the embedded thumbnail) | %.1f ms |\n| the picture | %.1f ms |\n| ratio | %.1f× faster |\n' \
  "$(echo "$e * 1000" | bc -l)" "$(echo "$m * 1000" | bc -l)" "$(echo "$m / $e" | bc -l)"
