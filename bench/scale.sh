#!/usr/bin/env bash
# A replica with a large result folder (issue 38): for each N, N results written in the
# on-disk layout (XX/KEY.jpeg, 1,500 bytes each, an hour of mtimes) beside the real result
# of one request, then the service started on a copy of that folder: seconds from start to
# the first X-Cache: HIT, seconds until the index holds the folder, the service's RSS over
# its RSS on an empty folder per entry, hits (wrk -c2) while the index fills and after;
# then started again with cache.maxBytes at 90% of the folder's du: the first HIT, misses
# (a new width each, wrk -c2) and hits (wrk -c1) side by side for 15 s while it evicts,
# and du against the cap after. With BEFORE_REF or BEFORE_BIN, the earlier build the same
# way on the same folder.
#
#   bash bench/scale.sh
#   SIZES="10000 100000 1000000" BEFORE_REF=01478d4 bash bench/scale.sh
# Env: SIZES ("10000 100000 1000000"), BEFORE_REF / BEFORE_BIN (optional, as bench/misses.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES="${SIZES:-10000 100000 1000000}"
. bench/lib.sh
bench_start wrk curl
before_build
trap before_cleanup EXIT
builds=(this "$BIN" "$PWD")
[ -z "$BEFORE" ] || builds+=("${BEFORE_REF:-before}" "$BEFORE" "$BEFORE_DIR")
echo "### A large result folder: start, memory, hits and misses while evicting (sizes: $SIZES)"
echo
python3 bench/scale.py "$out" "$IMAGES" "$SIZES" "${builds[@]}"
