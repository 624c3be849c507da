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

# nginx_in_front FRONT PORT0 PORT1 PORT2: deploy/nginx/aspect.conf with its listen and
# replica ports rewritten and each answer's replica added as X-Replica (for the benches
# only), in $out/aspect.conf, and an nginx.conf that includes it in $out, its files under
# $out/nginx. Start it with: nginx -c "$out/nginx.conf" -p "$out/nginx".
nginx_in_front() {
  mkdir -p "$out/nginx"
  sed -e "s/listen 8080;/listen 127.0.0.1:$1;/" \
      -e "s/127.0.0.1:8081/127.0.0.1:$2/; s/127.0.0.1:8082/127.0.0.1:$3/; s/127.0.0.1:8083/127.0.0.1:$4/" \
      -e 's|proxy_pass http://aspect;|proxy_pass http://aspect;\n        add_header X-Replica $upstream_addr always;|' \
      deploy/nginx/aspect.conf > "$out/aspect.conf"
  cat > "$out/nginx.conf" <<CONF
worker_processes 2;
pid $out/nginx/nginx.pid;
error_log $out/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $out/nginx/body; proxy_temp_path $out/nginx/proxy;
  fastcgi_temp_path $out/nginx/fastcgi; uwsgi_temp_path $out/nginx/uwsgi; scgi_temp_path $out/nginx/scgi;
  include $out/aspect.conf;
}
CONF
}

# many_sources: 24 sources in $out/images, the four samples ($BIN samples) under six names
# each (distinct names, distinct hashes), their names in the array `sources`.
many_sources() {
  "$BIN" samples "$out/samples" >/dev/null
  mkdir -p "$out/images"
  sources=()
  for i in 0 1 2 3 4 5; do
    for f in landscape.jpg portrait.jpg logo.png square.webp; do
      cp "$out/samples/$f" "$out/images/s$i-$f"; sources+=("s$i-$f")
    done
  done
}

# before_build: the build to compare with, from BEFORE_BIN (a checkout's
# .build/release/aspect, built already: run in that checkout, with its own config.json) or
# else BEFORE_REF (checked out under $out/before-src and built there). Sets BEFORE (the
# binary, empty without either) and BEFORE_DIR (where to run it); before_cleanup removes a
# checkout it made.
before_build() {
  BEFORE=""; BEFORE_DIR="$out/before-src"
  if [ -n "${BEFORE_BIN:-}" ]; then
    BEFORE="$BEFORE_BIN"
    BEFORE_DIR="$(cd "$(dirname "$BEFORE_BIN")/../.." && pwd)"
  elif [ -n "${BEFORE_REF:-}" ]; then
    git worktree add -q --detach "$out/before-src" "$BEFORE_REF"
    (cd "$out/before-src" && swift build -c release --product aspect >/dev/null)
    BEFORE="$out/before-src/.build/release/aspect"
  fi
}
before_cleanup() {
  [ -z "${BEFORE:-}" ] || [ -n "${BEFORE_BIN:-}" ] || git worktree remove --force "$out/before-src" 2>/dev/null || true
}

# metric PORT NAME: a metric of the Aspect listening on PORT, summed over its labelled lines.
metric() {
  curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" '$1 == n || index($1, n) == 1 && substr($1, length(n) + 1, 1) ~ /[{,]/ {s += $2} END {print s + 0}'
}

# cpu_ticks PID: user + system clock ticks of the process, of the children it has reaped
# (render workers replaced after server.workerJobs) and of every living process of its
# session (the workers now).
cpu_ticks() {
  local sid; sid=$(awk '{print $6}' "/proc/$1/stat")
  awk -v sid="$sid" -v pid="$1" '$6 == sid { t += $14 + $15 } $1 == pid { t += $16 + $17 } END { print t }' \
    /proc/[0-9]*/stat 2>/dev/null
}
