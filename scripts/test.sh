#!/usr/bin/env bash
# The README's second command: build and run the whole test suite.
#   scripts/test.sh            release build
#   scripts/test.sh debug      debug build with AddressSanitizer and UndefinedBehaviorSanitizer
#   scripts/test.sh cuda       release build that requires the CUDA backend (GPU cases run on a GPU)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
case "$preset" in
  release|debug|cuda) ;;
  *) echo "scripts/test.sh: unknown preset '$preset'; valid choices: 'release', 'debug' or 'cuda'" >&2; exit 2 ;;
esac
scripts/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset" -j2
