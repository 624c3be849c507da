#!/usr/bin/env bash
# Regenerates Tests/Fixtures/placeholder-vectors.json with PyPI's `thumbhash` and
# `blurhash` (and Pillow, to read the photos) in a throwaway venv.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install -q thumbhash==0.1.2 blurhash==1.1.5 pillow
"$venv/bin/python" Tests/Fixtures/make-placeholder-vectors.py
