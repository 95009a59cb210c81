#!/usr/bin/env bash
# The README's first command: install what is missing, build (release), and run the main job:
# reproduce every synthetic figure of the paper (configs/paper.toml) into figures/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target lenlab lenlab_python
./build/release/lenlab reproduce --out figures
echo "figures, their data and the claims checked against them: figures/report.md"
