#!/usr/bin/env bash
# The test command: installs what is missing, builds with warnings as errors, checks the
# formatting, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
# The real photos: the team's shared folder beside the checkout, else fetched from Debian.
[ -f ../shared/images/big.jpg ] || bash scripts/fetch-photos.sh
swift build --build-tests -Xswiftc -warnings-as-errors
swift format lint --strict -r Sources Tests bench Package.swift
swift test --skip-build
