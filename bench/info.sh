#!/usr/bin/env bash
# /info beside /thumb, in one run (issues 16 and 27), each pair on a copy of the photo
# never asked for before, the two orders alternating, medians:
#   1. /thumb (a 300×225 fill, which leaves /info's answer behind) then /info: the /thumb
#      miss with that extra work, and /info after it (a hit);
#   2. /info (a miss: its own decode) then /thumb (no /info work: it is stored already);
#   3. hits: wrk on one /info and one /thumb, rounds alternating, medians.
#
#   bash bench/info.sh
# Env: N (30 misses of each), ROUNDS (5), DURATION (10s), CONNS (64), PHOTO (big.jpg).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-30}"; ROUNDS="${ROUNDS:-5}"; DURATION="${DURATION:-10s}"; CONNS="${CONNS:-64}"; PHOTO="${PHOTO:-big.jpg}"
PEERS="$(cd ../shared/peers && pwd)"
bash scripts/setup.sh
. "$PEERS/common.sh"
need_apt wrk curl
[ -f "$IMAGES/$PHOTO" ] || "$PEERS/make-corpus.sh" >/dev/null
swift build -c release --product aspect >/dev/null
BIN="$PWD/$(swift build -c release --show-bin-path | sed "s|^$PWD/||")/aspect"
out=$(mktemp -d); echo "raw output: $out" >&2
mkdir -p "$out/images"
for i in $(seq "$N"); do
  cp "$IMAGES/$PHOTO" "$out/images/info-$i.jpg"; cp "$IMAGES/$PHOTO" "$out/images/thumb-$i.jpg"
done
cp "$IMAGES/$PHOTO" "$out/images/hit.jpg"
cat "$out"/images/* > /dev/null  # in the page cache, both kinds alike
. bench/lib.sh
serve_images 18380
THUMB_Q="w=300&h=225&mode=fill"
for i in $(seq "$N"); do
  # thumb-$i: /thumb first; info-$i: /info first.
  time_of "http://127.0.0.1:18380/thumb?src=thumb-$i.jpg&$THUMB_Q" >> "$out/miss-thumb.txt"
  time_of "http://127.0.0.1:18380/info?src=thumb-$i.jpg" >> "$out/info-after-thumb.txt"
  curl -s -D - -o /dev/null "http://127.0.0.1:18380/info?src=thumb-$i.jpg" | tr -d '\r' \
    | awk -F': ' 'tolower($1)=="x-cache"{print $2}' >> "$out/info-after-thumb-cache.txt"
  time_of "http://127.0.0.1:18380/info?src=info-$i.jpg" >> "$out/miss-info.txt"
  time_of "http://127.0.0.1:18380/thumb?src=info-$i.jpg&$THUMB_Q" >> "$out/miss-thumb-plain.txt"
done
INFO="http://127.0.0.1:18380/info?src=hit.jpg"
THUMB="http://127.0.0.1:18380/thumb?src=hit.jpg&$THUMB_Q"
time_of "$INFO" >/dev/null; time_of "$THUMB" >/dev/null
for r in $(seq "$ROUNDS"); do
  wrk -t2 -c"$CONNS" -d"$DURATION" "$INFO" > "$out/wrk-info-$r.txt"
  wrk -t2 -c"$CONNS" -d"$DURATION" "$THUMB" > "$out/wrk-thumb-$r.txt"
done
python3 - "$out" "$ROUNDS" "$N" "$PHOTO" "$(stat -c %s "$IMAGES/$PHOTO")" "$(curl -s "$INFO" | wc -c)" \
  "$(curl -s "$THUMB" | wc -c)" <<'PY'
import re, statistics, sys
out, rounds, n, photo, size, info_bytes, thumb_bytes = sys.argv[1:8]
rounds, n = int(rounds), int(n)
def col(name): return [float(x) * 1000 for x in open(f"{out}/{name}.txt").read().split()]
mi, mt = statistics.median(col("miss-info")), statistics.median(col("miss-thumb"))
mp, ia = statistics.median(col("miss-thumb-plain")), statistics.median(col("info-after-thumb"))
hits = open(f"{out}/info-after-thumb-cache.txt").read().split().count("HIT")
print(f"### /info beside /thumb: {photo} ({int(size) // 1000} kB), medians\n")
print("| request | ms (median of %d) |" % n)
print("|---|---|")
print(f"| /info miss (header, 100 px decode, ThumbHash, BlurHash, colours) | {mi:.1f} |")
print(f"| /thumb 300×225 fill miss, its /info already stored | {mp:.1f} |")
print(f"| /thumb 300×225 fill miss that also leaves /info behind | {mt:.1f} |")
print(f"| /info right after that /thumb ({hits} of {n} HIT) | {ia:.1f} |")
print(f"\n/info miss / /thumb miss: {mi / mp:.2f}×; the /thumb miss with /info's work / without: {mt / mp:.2f}×\n")
def rps(kind):
    return [float(re.search(r"Requests/sec:\s+([\d.]+)", open(f"{out}/wrk-{kind}-{r}.txt").read()).group(1))
            for r in range(1, rounds + 1)]
i, t = rps("info"), rps("thumb")
print(f"| hits, wrk -t2 -c64, {rounds} alternating rounds | req/s (median) | range | body bytes |")
print("|---|---|---|---|")
print(f"| /info | {statistics.median(i):.0f} | {min(i):.0f}–{max(i):.0f} | {info_bytes} |")
print(f"| /thumb 300×225 fill | {statistics.median(t):.0f} | {min(t):.0f}–{max(t):.0f} | {thumb_bytes} |")
PY
