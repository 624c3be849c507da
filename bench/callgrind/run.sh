#!/usr/bin/env bash
# User-space instructions per cache hit, counted by valgrind's callgrind: repeatable
# whatever else the machine is doing, unlike a throughput ratio. For each binary given
# (default: this checkout's release build), `aspect serve` runs under callgrind twice, for
# N1 and N2 hits on one keep-alive connection (after one miss); the difference of the two
# totals over N2 − N1 is the cost of one hit, start-up and the miss cancelled out. Kernel
# time (sendfile, TCP) is not counted: callgrind sees user space only.
#   bash bench/callgrind/run.sh [BINARY...]
set -euo pipefail
cd "$(dirname "$0")/../.."
N1="${N1:-500}"; N2="${N2:-2500}"
command -v valgrind >/dev/null || { sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo; $sudo apt-get install -y -qq valgrind >/dev/null; }
if [ $# -eq 0 ]; then
  swift build -c release --product aspect >/dev/null
  set -- "$(swift build -c release --show-bin-path)/aspect"
fi
out=$(mktemp -d); echo "raw output: $out" >&2
"$1" samples "$out/images" >/dev/null
TARGET="/thumb?src=landscape.jpg&w=300&ratio=4:3&mode=fill&format=jpeg"
total() {  # binary n -> instructions
  local bin="$1" n="$2" port=18620
  rm -rf "$out/cache"
  # Renders in the service's own threads where the build has render workers: a worker
  # started by /proc/self/exe under valgrind would be valgrind, and the hit path is the
  # same either way.
  local iso=""
  if "$bin" config 2>/dev/null | grep -q "server.isolation"; then iso="ASPECT_SERVER_ISOLATION=thread"; fi
  # In the scratch folder: built-in defaults, not this checkout's config.json.
  (cd "$out" && exec env $iso VIPS_NOVECTOR=1 ASPECT_LOG_ACCESS=false ASPECT_SERVER_EVENTLOOPS=1 ASPECT_SERVER_WORKERS=1 \
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" "$bin" serve --port "$port" \
    --images "$out/images" --cache-dir "$out/cache" 2>"$out/valgrind.log") &
  local pid=$!
  for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.2; done
  python3 bench/callgrind/hits.py "$port" "$((n + 1))" "$TARGET" >/dev/null
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  callgrind_annotate "$out/cg.$pid" > "$out/annotate-$n.txt" 2>/dev/null
  awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}' "$out/annotate-$n.txt"
}
echo "| binary | instructions, $N1 hits | $N2 hits | per hit |"
echo "|---|---:|---:|---:|"
i=0
for bin in "$@"; do
  # Debian 12's valgrind cannot read the DWARF 5 that Swift 6 writes: a copy without it.
  i=$((i + 1)); cp "$bin" "$out/aspect-$i"; strip --strip-debug "$out/aspect-$i"
  a=$(total "$out/aspect-$i" "$N1"); b=$(total "$out/aspect-$i" "$N2")
  echo "| $bin | $a | $b | $(( (b - a) / (N2 - N1) )) |"
done
