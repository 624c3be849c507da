#!/usr/bin/env bash
# Aspect's thumbor URLs side by side with the real thumbor 7.8 from PyPI (issue 40): both
# serve the same folder of photos (the test photographs and a bordered picture for trim),
# bench/thumbor_side.py asks both ~440 URLs made from thumbor's grammar and reports, per
# URL, the two statuses, whether the sizes agree and the SSIM where they do.
#
#   bash bench/thumbor-side.sh            # summary and disagreements on stdout
# Env: REPORT (the per-URL table; default .build/thumbor-side.md), THUMBOR_PORT (8988),
#      ASPECT_PORT (8989).
set -euo pipefail
cd "$(dirname "$0")/.."
REPORT="${REPORT:-$PWD/.build/thumbor-side.md}"
TPORT="${THUMBOR_PORT:-8988}"; APORT="${ASPECT_PORT:-8989}"
bash scripts/setup.sh
bash scripts/fetch-photos.sh >/dev/null
venv=.build/thumbor-venv
if [ ! -x "$venv/bin/thumbor" ]; then
  echo "[thumbor-side] making $venv with thumbor 7.8.0" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "thumbor==7.8.0" numpy
fi
swift build -c release --product aspect >/dev/null
BIN="$(swift build -c release --show-bin-path)/aspect"
out=$(mktemp -d); echo "raw output: $out" >&2
mkdir -p "$out/images"
cp .build/photos/big.jpg .build/photos/medium.jpg .build/photos/portrait.jpg .build/photos/alpha.png "$out/images/"
# A picture with a white border and a black band along its bottom and right edges: trim
# (top-left, white) keeps the band, trim:bottom-right (black) keeps the white.
"$venv/bin/python" - "$out/images" <<'PY'
import sys
from PIL import Image
d = sys.argv[1]
photo = Image.open(f"{d}/medium.jpg").convert("RGB").resize((400, 267))
canvas = Image.new("RGB", (520, 400), "white")
canvas.paste(photo, (40, 50))
canvas.paste(Image.new("RGB", (520, 24), "black"), (0, 376))
canvas.paste(Image.new("RGB", (24, 400), "black"), (496, 0))
canvas.save(f"{d}/bordered.png")
# The same photo in an off-white frame with a little noise: trim and trim:top-left:10 cut it.
import random
random.seed(40)
frame = Image.new("RGB", (500, 380), (250, 250, 250))
px = frame.load()
for _ in range(400):
    x, y = random.randrange(500), random.randrange(380)
    px[x, y] = (246, 247, 245)
frame.paste(photo, (35, 60))
frame.save(f"{d}/framed.png")
PY
cat > "$out/thumbor.conf" <<CONF
LOADER = 'thumbor.loaders.file_loader'
FILE_LOADER_ROOT_PATH = '$out/images'
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = None
ALLOW_UNSAFE_URL = True
ENGINE = 'thumbor.engines.pil'
QUALITY = 80
PROGRESSIVE_JPEG = False
# Aspect honours EXIF orientation (SPEC: thumbor URLs); thumbor does when told.
RESPECT_ORIENTATION = True
AUTO_WEBP = False
DETECTORS = []
OPTIMIZERS = []
MAX_AGE = 0
CONF
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done' EXIT
setsid "$venv/bin/thumbor" --ip=127.0.0.1 --port="$TPORT" --conf="$out/thumbor.conf" --log-level=error \
  >"$out/thumbor.log" 2>&1 &
pids+=($!)
ASPECT_THUMBOR_ENABLED=true ASPECT_LOG_ACCESS=false setsid "$BIN" serve --port "$APORT" --images "$out/images" \
  --cache-dir "$out/cache" >/dev/null 2>"$out/aspect.log" &
pids+=($!)
for url in "http://127.0.0.1:$TPORT/healthcheck" "http://127.0.0.1:$APORT/healthz"; do
  for _ in $(seq 120); do curl -sf -o /dev/null "$url" && break; sleep 0.5; done
  curl -sf -o /dev/null "$url" || { echo "$url did not answer" >&2; exit 1; }
done
"$venv/bin/python" bench/thumbor_side.py "http://127.0.0.1:$TPORT" "http://127.0.0.1:$APORT" "$out/images" "$REPORT"
echo "per-URL table: $REPORT" >&2
