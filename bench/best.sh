#!/usr/bin/env bash
# format=best beside format=auto (both q=auto) and beside each single format at q=auto, on
# the team's photos, the samples, and drawings (the samples' logo; a chart and a settings
# page of text from bench/drawings, drawn by `aspect thumb` at their own size). For each
# picture and width: the bytes of every answer, its SSIM of luma against the unencoded
# result (the same request as PNG, `aspect-bench ssim`), the format best chose, and the
# time of each miss (the first request for its key; curl's total, one at a time). Medians
# by kind of picture. Accept is Chrome's (AVIF, WebP; no JPEG XL), so auto answers WebP
# (http.autoAvif is off by default) and best weighs AVIF, WebP and JPEG, and lossless
# WebP and PNG for a drawing.
#
#   bash bench/best.sh
# Env: WIDTHS ("300 600"; a drawing is also asked at its own size).
set -euo pipefail
cd "$(dirname "$0")/.."
WIDTHS="${WIDTHS:-300 600}"
. bench/lib.sh
bench_start curl libvips-tools
bash scripts/fetch-photos.sh >/dev/null
swift build -c release --product aspect-bench >/dev/null
BENCH="$(dirname "$BIN")/aspect-bench"
mkdir -p "$out/images" "$out/samples"
cp .build/photos/big.jpg .build/photos/medium.jpg .build/photos/portrait.jpg "$out/images/"
"$BIN" samples "$out/samples" >/dev/null
for f in landscape.jpg portrait.jpg square.webp logo.png; do cp "$out/samples/$f" "$out/images/sample-$f"; done
for d in chart screen; do "$BIN" thumb "bench/drawings/$d.svg" "$out/images/drawing-$d.png" 2>/dev/null; done
serve_images 18197
ACCEPT="image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
get() {  # query file -> "bytes seconds x-format-chosen"
  curl -s -H "Accept: $ACCEPT" -o "$2" -D "$2.h" -w '%{size_download} %{time_total}' "http://127.0.0.1:18197/thumb?$1"
  echo " $(tr -d '\r' < "$2.h" | awk -F': ' 'tolower($1)=="x-format-chosen"{print $2}')"
}
ssim() { "$BENCH" ssim "$1" "$2"; }
printf 'image\tkind\twidth\tbest_bytes\tbest_ssim\tbest_s\tchosen\tauto_bytes\tauto_ssim\tauto_s' > "$out/rows.tsv"
for f in avif webp jxl jpeg; do printf '\t%s_bytes\t%s_ssim' "$f" "$f" >> "$out/rows.tsv"; done
echo >> "$out/rows.tsv"
for img in big.jpg medium.jpg portrait.jpg sample-landscape.jpg sample-portrait.jpg sample-square.webp \
  sample-logo.png drawing-chart.png drawing-screen.png; do
  kind=photo; case "$img" in sample-logo.png | drawing-*) kind=drawing ;; esac
  widths="$WIDTHS"; [ "$kind" = drawing ] && widths="$WIDTHS own"
  for w in $widths; do
    box="w=$w"; [ "$w" = own ] && box="w=$(vipsheader -f width "$out/images/$img")"
    stem="$out/$img-$w"
    get "src=$img&$box&format=png" "$stem.png" >/dev/null
    read -r bb bs chosen < <(get "src=$img&$box&format=best" "$stem.best")
    read -r ab as _ < <(get "src=$img&$box&format=auto&q=auto" "$stem.auto")
    row="$img\t$kind\t$w\t$bb\t$(ssim "$stem.png" "$stem.best")\t$bs\t$chosen\t$ab\t$(ssim "$stem.png" "$stem.auto")\t$as"
    for f in avif webp jxl jpeg; do
      read -r fb _ _ < <(get "src=$img&$box&format=$f&q=auto" "$stem.$f")
      row="$row\t$fb\t$(ssim "$stem.png" "$stem.$f")"
    done
    printf "$row\n" >> "$out/rows.tsv"
  done
done
metrics=$(curl -s http://127.0.0.1:18197/metrics | grep '^aspect_best_format_total' | tr '\n' ' ')
echo "### format=best beside format=auto (both q=auto) and each format at q=auto; Accept as Chrome sends it"
echo
python3 - "$out/rows.tsv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
med = statistics.median
print("| pictures | results | best's bytes vs auto (median) | vs the smallest single lossy format | best's SSIM (median, min) | auto's SSIM (median) | chosen | best miss / auto miss (median) |")
print("|---|---:|---:|---:|---:|---:|---|---:|")
for kind in ("photo", "drawing", "all"):
    rs = [r for r in rows if kind in ("all", r["kind"])]
    vs_auto = [int(r["best_bytes"]) / int(r["auto_bytes"]) for r in rs]
    single = [int(r["best_bytes"]) / min(int(r[f + "_bytes"]) for f in ("avif", "webp", "jpeg")) for r in rs]
    s = [float(r["best_ssim"]) for r in rs]
    sa = [float(r["auto_ssim"]) for r in rs]
    t = [float(r["best_s"]) / float(r["auto_s"]) for r in rs]
    chosen = {}
    for r in rs: chosen[r["chosen"] or "none"] = chosen.get(r["chosen"] or "none", 0) + 1
    names = ", ".join(f"{k} {v}" for k, v in sorted(chosen.items(), key=lambda kv: -kv[1]))
    print(f"| {kind} | {len(rs)} | {med(vs_auto):.2f}× ({(1 - med(vs_auto)) * 100:.0f}% under) | {med(single):.2f}× | "
          f"{med(s):.4f} ({min(s):.4f}) | {med(sa):.4f} | {names} | {med(t):.2f}× |")
print()
print("| image | width | best: bytes, SSIM, chosen | auto (WebP): bytes, SSIM | AVIF | WebP | JPEG XL | JPEG | best miss s | auto miss s |")
print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['image']} | {r['width']} | {r['best_bytes']}, {float(r['best_ssim']):.4f}, {r['chosen']} | "
          f"{r['auto_bytes']}, {float(r['auto_ssim']):.4f} | "
          + " | ".join(f"{r[f + '_bytes']} ({float(r[f + '_ssim']):.3f})" for f in ("avif", "webp", "jxl", "jpeg"))
          + f" | {float(r['best_s']):.3f} | {float(r['auto_s']):.3f} |")
PY
echo
echo "aspect_best_format_total: $metrics"
echo "rows: $out/rows.tsv"
