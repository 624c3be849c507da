# Shared by the bench scripts; source it.

# bench_start PACKAGE…: what a bench needs before it measures: the service's packages, the
# peers' helpers (../shared/peers/common.sh: need_apt, wait_http, $IMAGES, …) and the
# Debian packages named, the photo corpus, a release build in $BIN, a fresh folder in $out.
bench_start() {
  PEERS="$(cd ../shared/peers && pwd)"
  bash scripts/setup.sh
  . "$PEERS/common.sh"
  need_apt "$@"
  [ -f "$IMAGES/big.jpg" ] || "$PEERS/make-corpus.sh" >/dev/null
  swift build -c release --product aspect >/dev/null
  BIN="$PWD/$(swift build -c release --show-bin-path | sed "s|^$PWD/||")/aspect"
  out=$(mktemp -d); echo "raw output: $out" >&2
}

# time_of URL: the seconds one request took; it must answer 200 (a bench of errors
# measures nothing), else the script stops.
time_of() {
  local r; r=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' "$1")
  [ "${r% *}" = 200 ] || { echo "$1 answered ${r% *}" >&2; exit 1; }
  echo "${r#* }"
}

# serve_images PORT: `aspect serve` ($BIN) on $out/images, its cache in $out/cache and its
# event log in $out/aspect.log, in a session of its own that the script's exit ends;
# returns once /healthz answers. Sets pid.
serve_images() {
  ASPECT_LOG_ACCESS=false setsid "$BIN" serve --port "$1" --images "$out/images" --cache-dir "$out/cache" \
    >/dev/null 2>"$out/aspect.log" &
  pid=$!
  trap 'kill -TERM -- "-$pid" 2>/dev/null || true' EXIT
  wait_http "http://127.0.0.1:$1/healthz" 30
}
