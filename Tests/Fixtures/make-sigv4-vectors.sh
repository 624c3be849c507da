#!/usr/bin/env bash
# Regenerates Tests/Fixtures/sigv4-vectors.json with botocore in a throwaway venv.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install -q botocore
"$venv/bin/python" Tests/Fixtures/make-sigv4-vectors.py
