#pragma once
// The live page's sample beside a finished text run's curve: what the run writes, greedily, after
// the first characters of its corpus's test split (lenlab generate's engine,
// lab/run/generate_run.hpp). The client chooses nothing: the prompt, the length and the decoding
// are fixed here, so a request costs the same small, bounded work whoever sends it, and reveals no
// text but the run's own corpus's, which its owner chose by name.
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

namespace lenlab {

inline constexpr int kSamplePromptCharacters = 40;
inline constexpr int kSampleTokens = 200;

// {"prompt": the test split's first kSamplePromptCharacters characters, "text": the
// kSampleTokens characters the run wrote after them, "tokens", "decoding": "greedy"}. UsageError
// for a folder that holds no completed text run.
nlohmann::ordered_json text_run_sample(const std::filesystem::path& run_dir);

// Each run's sample, written once (a finished run's weights do not change) and kept.
class RunSamples {
 public:
  nlohmann::ordered_json get(int number, const std::filesystem::path& run_dir);

 private:
  std::mutex mutex_;
  std::map<int, nlohmann::ordered_json> samples_;
};

}  // namespace lenlab
