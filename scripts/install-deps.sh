#!/usr/bin/env bash
# Installs the Debian packages lenlab builds with, if any is missing. As root it runs apt-get;
# otherwise it prints the apt-get line to run and fails.
set -euo pipefail

# The last two lines: the Python module (pybind11) with what it and its tests and notebooks use, and
# PyTorch for the training cross-check (tools/torch_reference); all for Debian's /usr/bin/python3
# (docs/python.md). Debian's PyTorch calls the system BLAS, the reference one unless OpenBLAS is
# installed: with OpenBLAS its training steps ran 10x faster. lenlab links OpenBLAS's OpenMP build
# for its float linear layers (libopenblas-openmp-dev; CMakeLists.txt says why not the serial one),
# which then is PyTorch's BLAS too: torch.set_num_threads(1) holds it to one thread.
# slurm-wlm and munge: the Slurm test starts a one-node cluster on this machine
# (tests/slurm/localhost_cluster.sh) with its own daemons and files, none of the system's.
# bible-kjv: the King James Bible, public domain, from which the build writes the text task's
# default corpus (cmake/kjv_corpus.cmake; docs/tasks.md). ccache: a build of sources compiled
# before, in any clone, takes seconds (CMakeLists.txt). libboost-dev: Boost.Math's distributions
# for the verdicts' tests (stats/); python3-scipy: their reference in tests/stats.
# python3-venv, python3-pip and python3-build: lenlab as a pip package in a venv, and
# `python3 -m build` (docs/python.md); the test suite installs it so, without network.
packages=(g++ cmake make git libeigen3-dev doctest-dev libmuparser-dev nlohmann-json3-dev
          libcli11-dev libfmt-dev libtomlplusplus-dev libgmp-dev bible-kjv gnuplot-nox libcmark-gfm-dev
          libcmark-gfm-extensions-dev libcpp-httplib-dev chromium libboost-dev python3-scipy
          python3-dev pybind11-dev python3-numpy python3-pytest python3-tqdm python3-pandas
          python3-matplotlib python3-nbformat python3-nbclient python3-ipykernel python3-torch
          python3-venv python3-pip python3-build
          libopenblas0-openmp libopenblas-openmp-dev slurm-wlm munge ccache)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm run the browser test; asked for by command, since a Node.js from elsewhere (with
# its own npm) would conflict with Debian's packages.
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)

# The browser test's puppeteer-core, as pinned by tests/browser/package-lock.json. Without it (no
# registry reachable) that one test skips, saying why.
install_browser_test() {
  [ -d tests/browser/node_modules/puppeteer-core ] && return 0
  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    echo "install-deps: npm ci in tests/browser failed; the browser test will skip" >&2
}
cd "$(dirname "$0")/.."
if [ ${#missing[@]} -eq 0 ]; then
  install_browser_test
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "lenlab needs these Debian packages: ${missing[*]}" >&2
  echo "install them with:  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_browser_test
