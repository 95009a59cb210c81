#pragma once
// Where the tests find the program, the configs and their scratch space: paths of this build,
// defined in one generated file (tests/CMakeLists.txt) rather than as -D flags on every test file,
// so that a test file compiled in one clone's folder is the same compile in another's (ccache
// finds it).
namespace lenlab::test_paths {
extern const char* const kTmp;      // scratch folders below it (build/<preset>/tests/tmp)
extern const char* const kBinary;   // the lenlab program
extern const char* const kConfigs;  // configs/
extern const char* const kBench;    // lenlab_bench ("" where the build has no benchmarks)
}  // namespace lenlab::test_paths

#define LENLAB_TEST_TMP ::lenlab::test_paths::kTmp
#define LENLAB_BINARY ::lenlab::test_paths::kBinary
#define LENLAB_CONFIGS_DIR ::lenlab::test_paths::kConfigs
#define LENLAB_BENCH_BINARY ::lenlab::test_paths::kBench
