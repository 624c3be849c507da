#!/usr/bin/env bash
# Coverage-guided fuzzing of the HTTP request parser with libFuzzer (and AddressSanitizer).
#   bash fuzz/parser.sh [SECONDS]       (default 60)
# Crashes, if any, are written to .build/fuzz/ as crash-*; the corpus grows in .build/fuzz/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .build/fuzz/corpus
cp -n fuzz/corpus/* .build/fuzz/corpus/ 2>/dev/null || true
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name HTTP Sources/HTTP/*.swift fuzz/ParserFuzz.swift \
  -o .build/fuzz/parser 2> >(grep -v "Cannot export local symbol" >&2)
cd .build/fuzz
./parser -max_total_time="${1:-60}" -max_len=4096 corpus
