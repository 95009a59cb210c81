#!/usr/bin/env bash
# The README's first command: install what is missing, build (release), run the main job.
# Main job for now: one `lenlab train` run, the paper's Figure 1c setting with OutRep 1/sqrt.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target lenlab
./build/release/lenlab train --task length --pe nope --reparam invsqrt --l-train 10 --l-test 50 \
  --steps 2000 --seed 1 --out runs/quickstart --overwrite
echo "results: runs/quickstart/results.csv (test MSE per length), runs/quickstart/manifest.json"
