#!/usr/bin/env bash
# q=auto beside q=80 and beside pyvips' defaults: the team's photos and the samples, at
# three widths, as JPEG and WebP. For each: bytes, and SSIM of luma against the unencoded
# result (the same request as PNG; pyvips' own PNG for pyvips), measured by
# `aspect-bench ssim`; and the time of the q=auto miss beside the q=80 miss (each the
# first request for its key). Medians over the set. Then q=auto's search replayed on each
# result measured at every quality from 30 to 90 (`aspect-bench search`): the encodes it
# makes, and whether its choice is within 2 of the lowest quality that keeps the picture.
#
#   bash bench/quality.sh
# Env: WIDTHS ("300 600 1200"), FORMATS ("jpeg webp").
set -euo pipefail
cd "$(dirname "$0")/.."
WIDTHS="${WIDTHS:-300 600 1200}"; FORMATS="${FORMATS:-jpeg webp}"
PEERS="$(cd ../shared/peers && pwd)"
bash scripts/setup.sh
bash scripts/fetch-photos.sh
. "$PEERS/common.sh"
need_apt curl libvips42
need_venv "$OPT/pyvips" "pyvips==$PYVIPS_VERSION"
swift build -c release --product aspect >/dev/null
swift build -c release --product aspect-bench >/dev/null
BIN="$(swift build -c release --show-bin-path)"
out=$(mktemp -d); echo "raw output: $out" >&2
mkdir -p "$out/images" "$out/samples"
cp .build/photos/big.jpg .build/photos/medium.jpg .build/photos/portrait.jpg "$out/images/"
"$BIN/aspect" samples "$out/samples" >/dev/null
for f in landscape.jpg portrait.jpg square.webp; do cp "$out/samples/$f" "$out/images/sample-$f"; done
pid=""
cleanup() { [ -z "$pid" ] || kill -TERM -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; }
trap cleanup EXIT
env ASPECT_LOG_ACCESS=false setsid "$BIN/aspect" serve --port 18196 --images "$out/images" --cache-dir "$out/cache" \
  >/dev/null 2>"$out/aspect.log" &
pid=$!
wait_http "http://127.0.0.1:18196/healthz" 30
base="http://127.0.0.1:18196/thumb"
get() {  # query file -> "bytes seconds x-quality"
  curl -s -o "$2" -D "$2.h" -w '%{size_download} %{time_total}' "$base?$1"
  echo " $(tr -d '\r' < "$2.h" | awk -F': ' 'tolower($1)=="x-quality"{print $2}')"
}
ext() { [ "$1" = jpeg ] && echo jpg || echo "$1"; }
printf 'image\twidth\tformat\tauto_q\tauto_bytes\tauto_ssim\tauto_s\tq80_bytes\tq80_ssim\tq80_s\tpyvips_bytes\tpyvips_ssim\n' \
  > "$out/rows.tsv"
for img in big.jpg medium.jpg portrait.jpg sample-landscape.jpg sample-portrait.jpg sample-square.webp; do
  for w in $WIDTHS; do
    f0="$out/$img-$w"
    get "src=$img&w=$w&format=png" "$f0.png" >/dev/null
    "$OPT/pyvips/bin/python" - "$out/images/$img" "$w" "$f0" $FORMATS <<'PY'
import sys, pyvips
path, w, stem, formats = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
img = pyvips.Image.thumbnail(path, w).copy_memory()  # written three times
img.write_to_file(stem + ".pyvips.png")
for f in formats:
    img.write_to_file(stem + ".pyvips." + ("jpg" if f == "jpeg" else f))  # the savers' default Q
PY
    for fmt in $FORMATS; do
      read -r ab as aq < <(get "src=$img&w=$w&format=$fmt&q=auto" "$f0.auto.$(ext "$fmt")")
      read -r fb fs _ < <(get "src=$img&w=$w&format=$fmt&q=80" "$f0.q80.$(ext "$fmt")")
      pv="$f0.pyvips.$(ext "$fmt")"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$img" "$w" "$fmt" "$aq" "$ab" \
        "$("$BIN/aspect-bench" ssim "$f0.png" "$f0.auto.$(ext "$fmt")")" "$as" \
        "$fb" "$("$BIN/aspect-bench" ssim "$f0.png" "$f0.q80.$(ext "$fmt")")" "$fs" \
        "$(stat -c %s "$pv")" "$("$BIN/aspect-bench" ssim "$f0.pyvips.png" "$pv")" >> "$out/rows.tsv"
      printf '%s\t%s\t%s\t%s\n' "$img" "$w" "$fmt" "$("$BIN/aspect-bench" search "$f0.png" "$fmt" | tr ' ' '\t')" \
        >> "$out/search.tsv"
    done
  done
done
echo "### q=auto beside q=80 and pyvips' defaults: $(($(wc -l < "$out/rows.tsv") - 1)) results (6 images × widths $WIDTHS × $FORMATS)"
echo
python3 - "$out/rows.tsv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
med = statistics.median
print("| format | results | q=auto: quality (median, range) | bytes vs q=80 (median) | SSIM q=auto (median, min) | SSIM q=80 (median) | pyvips default: bytes vs q=80, SSIM (medians) | q=auto miss / q=80 miss (median) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for fmt in sorted({r["format"] for r in rows}) + ["all"]:
    rs = [r for r in rows if fmt in ("all", r["format"])]
    q = [int(r["auto_q"]) for r in rs]
    ratio = [int(r["auto_bytes"]) / int(r["q80_bytes"]) for r in rs]
    sa = [float(r["auto_ssim"]) for r in rs]
    s8 = [float(r["q80_ssim"]) for r in rs]
    pv = [int(r["pyvips_bytes"]) / int(r["q80_bytes"]) for r in rs]
    ps = [float(r["pyvips_ssim"]) for r in rs]
    t = [float(r["auto_s"]) / float(r["q80_s"]) for r in rs]
    print(f"| {fmt} | {len(rs)} | {med(q):.0f} ({min(q)}–{max(q)}) | {med(ratio):.2f}× | {med(sa):.4f} ({min(sa):.4f}) | "
          f"{med(s8):.4f} | {med(pv):.2f}×, {med(ps):.4f} | {med(t):.2f}× |")
PY
echo
echo "### q=auto's search replayed on every quality's measure of the same results"
echo
python3 - "$out/search.tsv" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
print("| format | results | encodes (mean, median, max) | choice within 2 of the lowest that keeps it |")
print("|---|---:|---:|---:|")
for fmt in sorted({r[2] for r in rows}) + ["all"]:
    rs = [r for r in rows if fmt in ("all", r[2])]
    e = [int(r[5]) for r in rs]
    ok = sum(0 <= int(r[3]) - int(r[4]) <= 2 for r in rs)
    print(f"| {fmt} | {len(rs)} | {statistics.mean(e):.1f}, {statistics.median(e):.0f}, {max(e)} | {ok} of {len(rs)} |")
PY
echo
echo "rows: $out/rows.tsv, $out/search.tsv"
