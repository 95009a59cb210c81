#include "lab/run/generate_run.hpp"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <ostream>

#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "lab/run/completed_run.hpp"
#include "lab/run/device.hpp"
#include "models/checkpoint.hpp"
#include "tasks/token_text.hpp"
#include "train/generate.hpp"
#include "train/inference_attention.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

namespace {

// The prompt's text: --prompt or the file --prompt-file names (at most 64 MiB).
std::string prompt_text(const GenerateOptions& o) {
  if (!o.prompt.empty() && !o.prompt_file.empty())
    throw UsageError("give the prompt once: --prompt TEXT or --prompt-file FILE, not both");
  if (o.prompt_file.empty()) return o.prompt;
  return for_flag("--prompt-file",
                  [&] { return read_regular_file(o.prompt_file, int64_t{64} << 20, "prompt"); });
}

}  // namespace

int run_generate(const GenerateOptions& o) {
  using Clock = std::chrono::steady_clock;
  // ---- every mistake before a token is written
  if (o.tokens < 1 || o.tokens > kMaxGenerateTokens)
    throw UsageError(
        fmt::format("--tokens must be in 1..{}, got {}", kMaxGenerateTokens, o.tokens));
  check_sampling(o.sampling);
  check_attention_without_test_set(o.attention, "generation");
  std::optional<CorpusPin> pin;
  TaskKind task{};
  const RunRecord record = open_completed_run(o.run_dir, task, pin);
  const TrainSpec& trained = record.spec;
  if (!is_token_task(task))
    throw UsageError(fmt::format(
        "the run in {} is task '{}', whose model outputs a number, not tokens: lenlab generate "
        "writes with a token task's or a text run's model",
        o.run_dir.string(), trained.task));
  const ResolvedSpec resolved = resolve_completed(o.run_dir, trained);
  const ModelConfig& config = resolved.model;
  GenerateJob job;
  job.attention = test_time_attention(o.attention, trained, config.pe);
  const TokenText text(task, trained.token, pin ? pin->corpus().get() : nullptr);
  job.prompt = text.parse(prompt_text(o));
  job.tokens = o.tokens;
  job.sampling = o.sampling;
  job.seed = o.seed;
  const int64_t capacity = static_cast<int64_t>(job.prompt.size()) + o.tokens;
  check_decode_memory(config, job.attention, capacity, resolved.float64, o.budget,
                      "write fewer --tokens");
  if (positional_encoding_info(config.pe).learned_table() && capacity > config.max_positions)
    throw UsageError(fmt::format(
        "the prompt's {} tokens and --tokens {} make {} positions, past the run's learned "
        "position table ({} rows, trained with --l-test {}): write at most {} tokens",
        job.prompt.size(), o.tokens, capacity, config.max_positions, trained.l_test,
        std::max<int64_t>(0, config.max_positions - static_cast<int64_t>(job.prompt.size()))));
  const std::vector<double> params = load_checkpoint(o.run_dir / "model.safetensors", config);
  const Device device = Device::choose(o.device, resolved.float64);

  // ---- write: the prompt, then each token as it comes
  if (o.out) {
    for (size_t i = 1; i < job.prompt.size(); ++i) *o.out << text.text_of(job.prompt[i]);
    o.out->flush();
  }
  const auto start = Clock::now();
  device.generate(config, params, job, o.threads > 0 ? o.threads : trained.threads,
                  resolved.float64, [&](int token) {
                    const std::string written = text.text_of(token);
                    if (o.out) *o.out << written << std::flush;
                    if (o.on_text) o.on_text(written);
                  });
  if (o.out) *o.out << "\n";
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (o.log)
    *o.log << fmt::format(
        "wrote {} tokens after a prompt of {} in {:.2f} s ({:.0f} tokens/s, {}, "
        "{})\n",
        o.tokens, job.prompt.size(), seconds, o.tokens / std::max(seconds, 1e-9),
        o.sampling.greedy() ? "greedy" : "sampled", device.label());
  return 0;
}

}  // namespace lenlab
