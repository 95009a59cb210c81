#include "lab/serve/run_sample.hpp"

#include <optional>
#include <string>

#include "lab/run/completed_run.hpp"
#include "lab/run/generate_run.hpp"
#include "tasks/text_corpus.hpp"

namespace lenlab {

nlohmann::ordered_json text_run_sample(const std::filesystem::path& run_dir) {
  std::optional<CorpusPin> pin;
  TaskKind task{};
  open_completed_run(run_dir, task, pin);
  if (!task_reads_corpus(task))
    throw UsageError("only a text run writes a sample (this run's task is not 'text')");
  GenerateOptions o;
  o.run_dir = run_dir;
  o.prompt = pin->corpus()->split_text(CorpusSplit::kTest).substr(0, kSamplePromptCharacters);
  o.tokens = kSampleTokens;
  o.device = "cpu";  // small and bounded; the GPU, if any, trains the queue's runs
  std::string text;
  o.on_text = [&text](const std::string& piece) { text += piece; };
  run_generate(o);
  return {{"prompt", o.prompt}, {"text", text}, {"tokens", kSampleTokens}, {"decoding", "greedy"}};
}

nlohmann::ordered_json RunSamples::get(int number, const std::filesystem::path& run_dir) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (const auto it = samples_.find(number); it != samples_.end()) return it->second;
  }
  // Written outside the lock (tens of milliseconds for the page's models); two first requests
  // for one run both write it, the same greedy text.
  nlohmann::ordered_json sample = text_run_sample(run_dir);
  const std::lock_guard<std::mutex> lock(mutex_);
  return samples_.emplace(number, std::move(sample)).first->second;
}

}  // namespace lenlab
