#!/usr/bin/env bash
# Coverage-guided fuzzing of the three URL forms with libFuzzer (and AddressSanitizer): each
# input is parsed, made canonical, settled on a source its header describes and planned, as
# the service does (fuzz/URLFuzz.swift says the input's layout).
#   bash fuzz/urls.sh FORM [SECONDS]     FORM: native, imgproxy or thumbor; SECONDS default 60
# The binary, .build/fuzz/urls, is built once for the three forms (again when Core or the
# harness is newer). Crashes, if any, are written to .build/fuzz/ as FORM-crash-*; the
# corpus grows in .build/fuzz/corpus-FORM. Rerun one: URLFUZZ_FORM=FORM .build/fuzz/urls FILE
set -euo pipefail
form="${1:-}"
case "$form" in
native | imgproxy | thumbor) ;;
*)
  echo "usage: bash fuzz/urls.sh native|imgproxy|thumbor [SECONDS]" >&2
  exit 2
  ;;
esac
cd "$(dirname "$0")/.."
mkdir -p .build/fuzz/"corpus-$form"
cp -n fuzz/"corpus-$form"/* .build/fuzz/"corpus-$form"/ 2>/dev/null || true
# Core and the dialects as one module (their signers, which need GLib, left out).
sources=$(ls Sources/Core/*.swift Sources/Imgproxy/*.swift Sources/Thumbor/*.swift | grep -v Signer.swift)
if [ ! -x .build/fuzz/urls ] || [ -n "$(find Sources/Core Sources/Imgproxy Sources/Thumbor fuzz/URLFuzz.swift -newer .build/fuzz/urls)" ]; then
  # shellcheck disable=SC2086 # one path a word
  swiftc -O -swift-version 6 -sanitize=fuzzer,address -parse-as-library -module-name Core \
    $sources fuzz/URLFuzz.swift \
    -o .build/fuzz/urls 2> >(grep -v "Cannot export local symbol\|ignoring import" >&2)
fi
cd .build/fuzz
# libFuzzer prints the stack of a trap; the Swift runtime's own backtracer would fight ASan for it.
export SWIFT_BACKTRACE=enable=no
URLFUZZ_FORM="$form" ./urls -max_total_time="${2:-60}" -max_len=512 -dict=../../fuzz/urls.dict \
  -artifact_prefix="$form-" "corpus-$form"
