#!/usr/bin/env bash
# Regenerates Tests/Fixtures/thumbor-filters.json from the real thumbor 7.8 (PyPI), in
# .build/thumbor-venv (made as bench/thumbor-side.sh makes it) over .build/photos.
# Env: THUMBOR_PORT (default: a free loopback port).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/fetch-photos.sh >/dev/null
venv=.build/thumbor-venv
if [ ! -x "$venv/bin/thumbor" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "thumbor==7.8.0" numpy
fi
"$venv/bin/python" Tests/Fixtures/record-thumbor-filters.py .build/photos Tests/Fixtures/thumbor-filters.json
