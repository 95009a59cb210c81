#!/usr/bin/env bash
# The checks a GPU machine is borrowed for, prepared on the development machine so that the GPU's
# time goes to running them (docs/gpu.md, "Checking on a borrowed GPU"):
#
#   scripts/gpu_check.sh pack [DIR]   after `cmake --preset cuda && cmake --build build/cuda`:
#                                     the cuda preset's lenlab, lenlab_cuda_tests and
#                                     lenlab_cuda_bench (stripped) and the shared libraries they
#                                     load that a bare machine may lack, into DIR (default
#                                     build/gpu-pack) and DIR.tar.gz (about 26 MB, under a carry's
#                                     64 MiB where the folder is 72 MB: carry that)
#   scripts/gpu_check.sh run [DIR] [OUT]
#                                     on the GPU machine, from the repository root (DIR, or
#                                     DIR.tar.gz unpacked into a temporary folder): the device
#                                     and driver, the CUDA parity suite, the speed benchmark (its
#                                     reproduction beside the dry run's prediction), and
#                                     configs/chomsky-quick.toml's dry run beside its run on the
#                                     GPU; every output into OUT (default $OUT, else gpu-check/)
#
# The cuda preset builds portable CPU code (no -march=native): the GPU machine's CPU may differ.
set -euo pipefail

mode=${1:-}
dir=${2:-build/gpu-pack}

case "$mode" in
  pack)
    build=build/cuda
    for f in lenlab tests/lenlab_cuda_tests bench/lenlab_cuda_bench; do
      [[ -x "$build/$f" ]] || {
        echo "gpu_check.sh: $build/$f is missing: run cmake --preset cuda && cmake --build $build" >&2
        exit 2
      }
    done
    rm -rf "$dir"
    mkdir -p "$dir/bin" "$dir/lib"
    for f in lenlab tests/lenlab_cuda_tests bench/lenlab_cuda_bench; do
      strip -o "$dir/bin/$(basename "$f")" "$build/$f"
    done
    # Every shared library the programs load but the C library's own (glibc, the loader, libm),
    # which a machine that runs the CUDA driver has. cuBLAS is opened at run time from the CUDA
    # toolkit (docs/gpu.md, "Building").
    ldd "$dir"/bin/* | awk '$3 ~ /^\// {print $3}' | sort -u |
      grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
      while read -r lib; do cp -L "$lib" "$dir/lib/"; done
    tar czf "$dir.tar.gz" -C "$(dirname "$dir")" "$(basename "$dir")"
    du -sh "$dir" "$dir.tar.gz"
    echo "carry $dir.tar.gz to the GPU machine; there: scripts/gpu_check.sh run $dir"
    ;;
  run)
    out=${3:-${OUT:-gpu-check}}
    mkdir -p "$out"
    if [[ ! -d "$dir" && -f "$dir.tar.gz" ]]; then
      unpacked=$(mktemp -d)
      tar xzf "$dir.tar.gz" -C "$unpacked"
      dir="$unpacked/$(basename "$dir")"
    fi
    [[ "$dir" = /* ]] || dir="$PWD/$dir"
    export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    bin="$dir/bin"
    status=0
    { nvidia-smi || true; } > "$out/device.txt" 2>&1
    echo "== parity: lenlab_cuda_tests"
    # 77: skipped, no usable GPU (the reason is printed)
    "$bin/lenlab_cuda_tests" > "$out/parity.txt" 2>&1 || status=$?
    tail -4 "$out/parity.txt"
    echo "== speed: lenlab_cuda_bench 300"
    "$bin/lenlab_cuda_bench" 300 > "$out/bench.txt" 2>&1 || status=$?
    cat "$out/bench.txt"
    echo "== configs/chomsky-quick.toml on the GPU: dry run, then the run"
    if "$bin/lenlab" run configs/chomsky-quick.toml --device cuda --dry-run \
        > "$out/chomsky-quick-dry.txt" 2>&1; then
      cat "$out/chomsky-quick-dry.txt"
      runs=$(mktemp -d)  # the runs stay there; their report and scores come back
      SECONDS=0
      "$bin/lenlab" run configs/chomsky-quick.toml --device cuda --out "$runs" \
        > "$out/chomsky-quick-run.txt" 2>&1 || status=$?
      echo "chomsky-quick on the GPU: ${SECONDS} s wall" | tee -a "$out/chomsky-quick-run.txt"
      tail -3 "$out/chomsky-quick-run.txt"
      cp "$runs"/report.md "$runs"/chomsky_scores.csv "$out/" 2>/dev/null || true
    else
      cat "$out/chomsky-quick-dry.txt"
    fi
    exit "$status"
    ;;
  *)
    echo "usage: scripts/gpu_check.sh pack [DIR] | run [DIR] [OUT]" >&2
    exit 2
    ;;
esac
