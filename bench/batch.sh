#!/usr/bin/env bash
# Issue 43: the batch commands against what an operator would script instead, alternating
# rounds on the same photos (the test photographs, copied under 8 names each: 40 files).
# 1. `aspect thumb DIR --out OUT --w 320 --format jpeg --q 80 --jobs 2 --force` beside
#    libvips' own `vipsthumbnail -s 320x -o …[Q=80]` run two at a time by `xargs -P 2`.
# 2. `aspect warm LIST --concurrency 4` beside `xargs -P 4 curl` over the same list (each
#    photo at 3 widths: 120 requests), each on a service started on an empty cache.
# Medians of ROUNDS rounds; the ratio is Aspect's throughput over the other's.
#
#   bash bench/batch.sh
# Env: ROUNDS (5).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"
. bench/lib.sh
bench_start curl libvips-tools
bash scripts/fetch-photos.sh >/dev/null
mkdir -p "$out/photos"
for f in .build/photos/*.jpg .build/photos/*.png; do
  for i in 1 2 3 4 5 6 7 8; do
    b=$(basename "$f"); cp "$f" "$out/photos/${b%.*}-$i.${b##*.}"
  done
done
n=$(ls "$out/photos" | wc -l)
now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "### aspect thumb --out beside vipsthumbnail with xargs -P 2 ($n photos, 320 px wide, JPEG q80)"
: > "$out/thumb.txt"; : > "$out/vips.txt"
for r in $(seq "$ROUNDS"); do
  rm -rf "$out/a" "$out/v"; mkdir -p "$out/a" "$out/v"
  t0=$(now); "$BIN" thumb "$out/photos" --out "$out/a" --w 320 --format jpeg --q 80 --jobs 2 --force \
    --progress none >/dev/null 2>&1 || true; t1=$(now)
  echo "$n / ($t1 - $t0)" | bc -l >> "$out/thumb.txt"
  t0=$(now); ls "$out"/photos/* | xargs -P 2 -n 1 vipsthumbnail -s 320x -o "$out/v/%s-320w.jpg[Q=80]"; t1=$(now)
  echo "$n / ($t1 - $t0)" | bc -l >> "$out/vips.txt"
done
a=$(median < "$out/thumb.txt"); v=$(median < "$out/vips.txt")
printf '| aspect thumb --out --jobs 2 | %.1f files/s |\n| vipsthumbnail, xargs -P 2 | %.1f files/s |\n| ratio | %.2f× |\n' "$a" "$v" "$(echo "$a / $v" | bc -l)"

echo
echo "### aspect warm beside xargs -P 4 curl ($n photos × 3 widths, a fresh cache each round)"
: > "$out/list.txt"
for f in $(ls "$out/photos"); do for w in 160 320 640; do echo "/thumb?src=$f&w=$w" >> "$out/list.txt"; done; done
m=$(wc -l < "$out/list.txt")
: > "$out/warm.txt"; : > "$out/curl.txt"
port=8790
serve_fresh() {
  rm -rf "$out/cache"
  ASPECT_LOG_ACCESS=false setsid "$BIN" serve --port "$port" --images "$out/photos" --cache-dir "$out/cache" \
    >/dev/null 2>"$out/aspect.log" &
  pid=$!
  trap 'kill -TERM -- "-$pid" 2>/dev/null || true' EXIT
  wait_http "http://127.0.0.1:$port/healthz" 30
}
for r in $(seq "$ROUNDS"); do
  serve_fresh
  t0=$(now); "$BIN" warm "$out/list.txt" --url "http://127.0.0.1:$port" --concurrency 4 --progress none \
    >/dev/null 2>&1; t1=$(now)
  echo "$m / ($t1 - $t0)" | bc -l >> "$out/warm.txt"
  kill -TERM -- "-$pid"; wait "$pid" 2>/dev/null || true
  serve_fresh
  t0=$(now); sed "s|^|http://127.0.0.1:$port|" "$out/list.txt" \
    | xargs -P 4 -n 1 curl -s -o /dev/null -H 'Accept: image/avif,image/webp,*/*'; t1=$(now)
  echo "$m / ($t1 - $t0)" | bc -l >> "$out/curl.txt"
  kill -TERM -- "-$pid"; wait "$pid" 2>/dev/null || true
done
w=$(median < "$out/warm.txt"); c=$(median < "$out/curl.txt")
printf '| aspect warm --concurrency 4 | %.1f requests/s |\n| xargs -P 4 curl | %.1f requests/s |\n| ratio | %.2f× |\n' "$w" "$c" "$(echo "$w / $c" | bc -l)"
