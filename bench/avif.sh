#!/usr/bin/env bash
# AVIF against WebP for one 600×400 fill result (http.autoAvif's cost): bench/formats.sh
# with those two formats.
#
#   bash bench/avif.sh
# Env: N (20 of each), PHOTO (medium.jpg).
set -euo pipefail
cd "$(dirname "$0")/.."
FORMATS="webp avif" exec bash bench/formats.sh
