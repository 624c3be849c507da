#!/usr/bin/env bash
# Which system calls a render worker makes once it is locked down, for the seccomp
# allowlist in Sources/CSandbox/csandbox.c (docs/security.md: how the list was made).
# Runs `aspect serve` under strace -f (one trace file a process), asks it for every source
# format, every output format and the options that take other paths (q=auto, maxbytes,
# faces, animations, video frames and previews, SVG with text, PDF pages, /info), and
# prints each call the workers made after their filter went on, with how many workers made it.
#
#   bash scripts/seccomp-audit.sh            (needs strace: apt-get install strace)
# Env: PORT (18470), KEEP=1 keeps the traces.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-18470}"
command -v strace >/dev/null || { echo "strace is needed" >&2; exit 2; }
swift build --product aspect >/dev/null
BIN="$(swift build --show-bin-path)/aspect"
out=$(mktemp -d)
trap '[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; [ "${KEEP:-}" = 1 ] || rm -rf "$out"' EXIT
"$BIN" samples "$out/images" >/dev/null
cp "$out/images/landscape.jpg" "$out/images/made.jpg"
# The other formats, made by libvips' own command from the sample landscape.
for ext in avif heic tif jxl; do
  vips thumbnail "$out/images/landscape.jpg" "$out/images/made.$ext" 320 2>/dev/null || true
done
cat > "$out/images/text.svg" <<'SVG'
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 80"><text x="10" y="55" font-family="sans-serif" font-size="40">Aspect</text></svg>
SVG
ASPECT_IMAGES_ROOT="$out/images" ASPECT_CACHE_DIR="$out/cache" ASPECT_CACHE_MAXBYTES=0 ASPECT_LOG_ACCESS=false \
  ASPECT_SERVER_WORKERS=2 ASPECT_IMAGES_FORMATS=jpeg,png,webp,gif,heif,tiff,svg,pdf,jxl,mp4 \
  strace -f -ff -qq -tt -o "$out/trace" "$BIN" serve --port "$PORT" 2>"$out/serve.log" &
pid=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done
ask() { curl -s -o /dev/null -w '%{http_code} ' "http://127.0.0.1:$PORT$1"; }
for src in landscape.jpg portrait.jpg logo.png square.webp bounce.gif badge.svg text.svg brochure.pdf clip.mp4 \
  made.avif made.heic made.tif made.jxl; do
  ask "/thumb?src=$src&w=120&format=png"
  ask "/info?src=$src&faces=1"
done
for f in jpeg png webp avif jxl gif tiff; do ask "/thumb?src=landscape.jpg&w=90&format=$f"; done
ask "/thumb?src=landscape.jpg&w=200&q=auto&format=webp"
ask "/thumb?src=landscape.jpg&w=800&maxbytes=2048&format=jpeg"
ask "/thumb?src=landscape.jpg&w=200&ratio=1&mode=fill&gravity=face"
ask "/thumb?src=landscape.jpg&w=200&ratio=1&mode=fill&gravity=smart&shape=circle&blur=2"
ask "/thumb?src=bounce.gif&w=64&format=webp"
ask "/thumb?src=clip.mp4&w=96&frames=4&format=webp"
ask "/thumb?src=clip.mp4&w=96&t=2.5&format=jpeg"
ask "/thumb?src=brochure.pdf&w=96&page=2&format=png"
echo >&2
# strace detaches on SIGTERM and leaves the service running: end the service itself.
pkill -P "$pid" -f "aspect serve" 2>/dev/null || true
wait "$pid" 2>/dev/null || true; pid=
# A worker's trace (-ff: one file a thread): the process that exec'd render-worker, and the
# threads it cloned, followed through their clones; the calls each made from the moment
# the filter went on (seccomp(SECCOMP_SET_MODE_FILTER, …)), by the clock (-tt).
python3 - "$out" <<'PY'
import collections, glob, os, re, sys
out = sys.argv[1]
files = {int(p.rsplit(".", 1)[1]): p for p in glob.glob(f"{out}/trace.*")}
def lines(pid):
    return open(files[pid], errors="replace").read().splitlines()
call = re.compile(r"^(\d\d:\d\d:\d\d\.\d+) (\w+)\((.*)")
counts = collections.Counter()
workers = 0
for pid in files:
    text = lines(pid)
    if not any('execve("/proc/self/exe"' in l and "render-worker" in l for l in text):
        continue
    workers += 1
    locked_at = next((call.match(l).group(1) for l in text
                      if call.match(l) and call.match(l).group(2) == "seccomp" and "SECCOMP_SET_MODE_FILTER" in l), None)
    if locked_at is None:
        continue
    threads, todo, seen = set(), [pid], set()
    while todo:
        t = todo.pop()
        if t in threads or t not in files:
            continue
        threads.add(t)
        for l in lines(t):
            m = call.match(l)
            if m and m.group(2) in ("clone", "clone3"):
                r = re.search(r"= (\d+)$", l)
                if r:
                    todo.append(int(r.group(1)))
    for t in threads:
        for l in lines(t):
            m = call.match(l)
            if m and m.group(1) > locked_at:
                seen.add(m.group(2))
    counts.update(seen)
print(f"{workers} workers traced")
for name, n in sorted(counts.items()):
    print(f"{name} {n}")
PY
