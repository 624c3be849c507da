#!/usr/bin/env bash
# The run command: installs what is missing, builds in release mode, makes the sample
# images on first run, and starts the service on config.json (127.0.0.1:8080, images in
# samples/, cache in cache/). Extra arguments go to `aspect serve` (--port 9000, …).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product aspect
bin=$(swift build -c release --show-bin-path)/aspect
"$bin" samples samples
exec "$bin" serve --config config.json "$@"
