#!/usr/bin/env bash
# Previews as video and storyboards (issue 55): an 8-frame hover preview of one size as
# GIF, animated WebP, MP4 and WebM, its bytes and its miss time, on two clips: camera-like
# footage (a one-minute pan across the team's 20 MP photo, 480×270 at 10 fps, H.264) and
# the samples' drawn clip; the samples' animated GIF in each format, every frame; then the one-minute clip's storyboard (10×10 tiles of 160×90,
# every 0.6 s: one sheet) and its WebVTT index. Each miss is the first request of its key
# (a new t each round), one at a time, curl's total; ROUNDS rounds, medians.
#
#   bash bench/previews.sh
# Env: ROUNDS (5), WIDTH (320).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; WIDTH="${WIDTH:-320}"
. bench/lib.sh
bench_start curl
need_venv "$OPT/pyvips" "pyvips==$PYVIPS_VERSION"
bash scripts/fetch-photos.sh >/dev/null
swift build -c release --product aspect-bench >/dev/null
BENCH="$(dirname "$BIN")/aspect-bench"
mkdir -p "$out/images"
"$BIN" samples "$out/samples" >/dev/null
cp "$out/samples/clip.mp4" "$out/images/drawn.mp4"
cp "$out/samples/bounce.gif" "$out/images/bounce.gif"
# The footage: 600 frames, a 480×270 window sliding and zooming slowly across the photo.
"$OPT/pyvips/bin/python" - .build/photos/big.jpg "$out/pan.rgb" <<'PY'
import sys, pyvips
photo = pyvips.Image.thumbnail(sys.argv[1], 1920).copy_memory()
with open(sys.argv[2], "wb") as out:
    for i in range(600):
        s = 1 - 0.4 * i / 600
        w, h = int(1920 * s * 0.5), int(1920 * s * 0.5 * 9 / 16)
        x = int((photo.width - w) * i / 599)
        y = int((photo.height - h) * (0.5 + 0.4 * ((i % 200) / 200 - 0.5)))
        frame = photo.crop(x, y, w, h).resize(480 / w, vscale=270 / h)
        out.write(frame.crop(0, 0, 480, 270).write_to_memory())
PY
"$BENCH" clip "$out/pan.rgb" 480 270 10 "$out/images/footage.mp4"
rm "$out/pan.rgb"
serve_images 18198
get() { curl -s -o "$2" -w '%{http_code} %{size_download} %{time_total}\n' "http://127.0.0.1:18198/$1"; }
: > "$out/rows.tsv"
for r in $(seq "$ROUNDS"); do
  for clip in footage.mp4 drawn.mp4; do
    for f in gif webp mp4 webm; do
      read -r status bytes secs < <(get "thumb?src=$clip&w=$WIDTH&frames=8&t=0.$r&format=$f" "$out/p.$f")
      [ "$status" = 200 ] || { echo "PROBLEM: $clip $f answered $status" >&2; exit 1; }
      printf '%s\t%s\t%s\t%s\n' "$clip" "$f" "$bytes" "$secs" >> "$out/rows.tsv"
    done
  done
  # An animated GIF made a video, every frame and its delays: the GIF-to-MP4 of sites.
  for f in gif webp mp4 webm; do
    read -r status bytes secs < <(get "thumb?src=bounce.gif&w=$((WIDTH - r * 2))&format=$f" "$out/g.$f")
    [ "$status" = 200 ] || { echo "PROBLEM: bounce.gif $f answered $status" >&2; exit 1; }
    printf '%s\t%s\t%s\t%s\n' bounce.gif "$f" "$bytes" "$secs" >> "$out/rows.tsv"
  done
  read -r status bytes secs < <(get "thumb?src=footage.mp4&w=160&h=90&mode=fill&tiles=10x10&every=0.6&t=0.0$r&format=jpeg" "$out/sheet.jpg")
  [ "$status" = 200 ] || { echo "PROBLEM: the sheet answered $status" >&2; exit 1; }
  printf 'footage.mp4\tsheet\t%s\t%s\n' "$bytes" "$secs" >> "$out/rows.tsv"
  read -r status bytes secs < <(get "storyboard.vtt?src=footage.mp4&w=160&h=90&mode=fill&tiles=10x10&every=0.6&t=0.0$r&format=jpeg" "$out/index.vtt")
  [ "$status" = 200 ] || { echo "PROBLEM: the index answered $status" >&2; exit 1; }
  printf 'footage.mp4\tvtt\t%s\t%s\n' "$bytes" "$secs" >> "$out/rows.tsv"
done
echo "### An 8-frame preview at $WIDTH wide as GIF, animated WebP, MP4 and WebM; a one-minute clip's storyboard; $ROUNDS rounds, medians"
echo
python3 - "$out/rows.tsv" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
med = statistics.median
def pick(clip, kind, i): return [float(r[i]) for r in rows if r[0] == clip and r[1] == kind]
print("| clip | GIF bytes | WebP bytes | MP4 bytes | WebM bytes | MP4 / WebP | WebM / WebP | miss ms: GIF, WebP, MP4, WebM |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
for clip, name in (("footage.mp4", "footage: a pan across a photo, 480×270"), ("drawn.mp4", "the samples' drawn clip, 320×240"),
                   ("bounce.gif", "the samples' animated GIF, every frame (about 318 wide)")):
    b = {f: med(pick(clip, f, 2)) for f in ("gif", "webp", "mp4", "webm")}
    t = {f: med(pick(clip, f, 3)) * 1000 for f in ("gif", "webp", "mp4", "webm")}
    print(f"| {name} | {b['gif']:.0f} | {b['webp']:.0f} | {b['mp4']:.0f} | {b['webm']:.0f} | {b['mp4'] / b['webp']:.2f}× | "
          f"{b['webm'] / b['webp']:.2f}× | {t['gif']:.0f}, {t['webp']:.0f}, {t['mp4']:.0f}, {t['webm']:.0f} |")
s, v = pick("footage.mp4", "sheet", 2), pick("footage.mp4", "sheet", 3)
vb, vt = pick("footage.mp4", "vtt", 2), pick("footage.mp4", "vtt", 3)
print()
print(f"Storyboard of the one-minute footage, 10×10 tiles of 160×90 (1600×900 JPEG): {med(s):.0f} bytes, "
      f"a miss {med(v) * 1000:.0f} ms; its index: {med(vb):.0f} bytes, {med(vt) * 1000:.1f} ms.")
PY
echo
echo "rows: $out/rows.tsv"
