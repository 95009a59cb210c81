#pragma once
// `lenlab generate`: a trained token-task or text run writing after a prompt, token by token from
// its key-value cache (train/generate.hpp), each token printed to `out` as soon as it is chosen:
// a text run's as characters, another token task's as its symbols (tasks/token_text.hpp). The
// test-time attention of lenlab eval applies; nothing is written to disk.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>

#include "cost/budget.hpp"
#include "train/inference_settings.hpp"
#include "train/token_sampler.hpp"

namespace lenlab {

// The most tokens one command writes (a typo's guard; longer streams: issue 57's --stream).
inline constexpr int kMaxGenerateTokens = 1'000'000;

struct GenerateOptions {
  std::filesystem::path run_dir;
  std::string prompt;                 // --prompt
  std::filesystem::path prompt_file;  // --prompt-file (one of the two)
  int tokens = 100;                   // to write
  Sampling sampling;                  // greedy unless a temperature is given
  uint64_t seed = 0;                  // the draws'
  TestTimeAttention attention;        // as lenlab eval's
  std::string device = "auto";
  int threads = 0;              // 0: the run's
  Budget budget;                // --max-memory bounds the key-value cache
  std::ostream* out = nullptr;  // the prompt and the written tokens; null: not printed
  std::ostream* log = nullptr;  // the closing summary
  // Called with each written token's text as it comes (the Python package's stream), if set.
  std::function<void(const std::string&)> on_text;
};

// Returns 0. UsageError, before any token is written, on bad input: no completed run or a scalar
// task's (no tokens to write); no prompt, both prompt flags, an empty prompt or symbols outside
// the run's vocabulary (named with their offset); --tokens outside 1..kMaxGenerateTokens; bad
// sampling settings; a test-time setting generation cannot take (an auto temperature or the
// trained distance cap, both measured on a test set); a key-value cache larger than --max-memory
// (saying how much it needs); a sequence past a learned position table.
int run_generate(const GenerateOptions& options);

}  // namespace lenlab
