#!/usr/bin/env bash
# Fuzzes what users hand lenlab with libFuzzer (docs/fuzzing.md): configs, expressions, the live
# page's run requests, run folders, the result files a folder holds for statistics and the
# server's request path (headers and settings).
#   scripts/fuzz.sh [SECONDS] [TARGET...]     SECONDS per target (default 600); TARGET: config,
#                                             expression, page_settings, run_folder, results_files,
#                                             serve_request (default all, one after the other)
# Configures a clang build in build/fuzz (-DLENLAB_FUZZ=ON: ASan, UBSan, libFuzzer), builds the
# targets and runs each on one core for SECONDS on a scratch copy of its seed corpus
# (build/fuzz/corpus/TARGET; fuzz/corpus/ in the repo is only read), with inputs of up to 1 MB
# (MAX_LEN bytes, the size of the live page's largest request). A crash, sanitizer report,
# timeout (> 10 s for one input) or out-of-memory (> 2 GB) is a finding: its input is saved in
# build/fuzz/findings/TARGET/ and the script exits 1 after running the remaining targets.
# Environment: JOBS (build jobs, default 2), MAX_LEN (largest input in bytes, default 1048576),
# FUZZ_FLAGS (extra libFuzzer flags), MUPARSER_SRC (a muparser source tree of the installed
# release, e.g. `git clone -b v2.3.3-1 https://github.com/beltoforion/muparser`: compiled in,
# instrumented, instead of Debian's uninstrumented libmuparser, so that the fuzzer is guided
# through muparser's parser too).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-600}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "scripts/fuzz.sh: SECONDS must be a positive integer, got '$seconds'" >&2
  exit 2
fi
shift $(( $# > 0 ? 1 : 0 ))
targets=("$@")
all_targets=(config expression page_settings run_folder results_files serve_request)
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  case "$t" in
    config|expression|page_settings|run_folder|results_files|serve_request) ;;
    *) echo "scripts/fuzz.sh: unknown target '$t'; valid targets: ${all_targets[*]}" >&2; exit 2 ;;
  esac
done
max_len="${MAX_LEN:-1048576}"
if ! [[ "$max_len" =~ ^[1-9][0-9]*$ ]]; then
  echo "scripts/fuzz.sh: MAX_LEN must be a positive integer (bytes), got '$max_len'" >&2
  exit 2
fi

# clang and its libFuzzer runtime (Debian ships the runtime in libclang-rt-N-dev).
fuzzer_rt=""
if command -v clang++ >/dev/null 2>&1; then
  fuzzer_rt="$(clang++ -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-x86_64.a"
  [ -f "$fuzzer_rt" ] || fuzzer_rt="$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)"
fi
if [ -z "$fuzzer_rt" ] || [ ! -f "$fuzzer_rt" ]; then
  major="$(clang++ --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)"
  pkgs="clang"
  rt_pkg="libclang-rt-${major:-14}-dev"
  if apt-cache show "$rt_pkg" >/dev/null 2>&1; then pkgs="$pkgs $rt_pkg"; fi
  echo "scripts/fuzz.sh: needs clang++ and its libFuzzer runtime (libclang_rt.fuzzer); install them with:" >&2
  echo "  apt-get install -y $pkgs" >&2
  exit 1
fi

build=build/fuzz
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLENLAB_FUZZ=ON -DLENLAB_CUDA=OFF -DLENLAB_BUILD_TESTS=OFF -DLENLAB_BUILD_BENCH=OFF \
  -DLENLAB_FUZZ_MUPARSER_SOURCE="${MUPARSER_SRC:+$(realpath "$MUPARSER_SRC")}" >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target $(printf 'fuzz_%s ' "${targets[@]}")

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
summary=""
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  findings="$build/findings/$t"
  log="$build/fuzz_$t.log"
  rm -rf "$corpus"
  mkdir -p "$corpus" "$findings"
  cp fuzz/corpus/"$t"/* "$corpus"/
  seeds=$(ls "$corpus" | wc -l)
  echo "== fuzz_$t: ${seconds} s on $seeds seed inputs of up to $max_len bytes (log: $log)"
  rc=0
  # shellcheck disable=SC2086  # FUZZ_FLAGS is a list of flags
  "$build/fuzz/fuzz_$t" "$corpus" -dict="fuzz/$t.dict" -max_total_time="$seconds" -max_len="$max_len" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" ${FUZZ_FLAGS:-} \
    >"$log" 2>&1 || rc=$?
  grep -E '^(#[0-9]+ +DONE|Done [0-9]+ runs)' "$log" | tail -2 || true
  grep -E '^stat::' "$log" || true
  line="fuzz_$t: exit $rc, corpus $seeds -> $(ls "$corpus" | wc -l) inputs"
  if [ "$rc" -ne 0 ]; then
    status=1
    line="$line, FINDING: $(grep -m1 -E 'ERROR: |runtime error|fuzz_[a-z_]+: ' "$log" || echo 'see the log'); input(s): $(ls "$findings" | tr '\n' ' ')"
    grep -E -A30 'ERROR: |runtime error|fuzz_[a-z_]+: ' "$log" | head -40 || true
  fi
  summary="$summary$line"$'\n'
done
echo "== summary"
printf '%s' "$summary"
echo "Reproduce a finding: $build/fuzz/fuzz_TARGET $build/findings/TARGET/<file>"
echo "Keep new coverage in the repo corpus (then review and trim what it adds):"
echo "  $build/fuzz/fuzz_TARGET -merge=1 fuzz/corpus/TARGET $build/corpus/TARGET"
exit "$status"
