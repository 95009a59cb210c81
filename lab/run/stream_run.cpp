#include "lab/run/stream_run.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/git_revision.hpp"
#include "core/process_memory.hpp"
#include "core/regular_file.hpp"
#include "core/version.hpp"
#include "lab/run/completed_run.hpp"
#include "lab/run/device.hpp"
#include "models/checkpoint.hpp"
#include "results/eval_record.hpp"
#include "tasks/token_text.hpp"
#include "train/inference_attention.hpp"
#include "train/run_settings.hpp"
#include "train/stream_eval.hpp"

namespace lenlab {

namespace fs = std::filesystem;

namespace {

// The largest stream file read (its bytes are held while it is read).
constexpr int64_t kMaxStreamFileBytes = int64_t{1} << 31;

struct Source {
  std::string name;  // as stream.json records it
  std::string text;
};

// --stream's text: a split of the corpus (its blocks in order), all of it, or a file.
Source stream_source(const std::string& source, const TextCorpus& corpus) {
  for (const CorpusSplit split :
       {CorpusSplit::kTest, CorpusSplit::kValidation, CorpusSplit::kTrain})
    if (source == corpus_split_name(split))
      return {fmt::format("{} split of {}", corpus_split_name(split), corpus.path()),
              corpus.split_text(split)};
  if (source == "all") return {fmt::format("all of {}", corpus.path()), corpus.text()};
  if (source.empty())
    throw UsageError(
        "--stream needs a source: test, validation, training (a split of the run's corpus), all "
        "(the whole corpus), or a file of the corpus's characters");
  Source file{fs::absolute(source).lexically_normal().string(), ""};
  file.text = for_flag("--stream",
                       [&] { return read_regular_file(source, kMaxStreamFileBytes, "stream"); });
  if (file.text.empty())
    throw UsageError(fmt::format("--stream: {} is empty; give a text to read", source));
  return file;
}

// The flags of the length evaluation that take no part in a stream (attention statistics,
// greedy decoding), refused by name.
void refuse_measurements(const TestTimeAttention& given) {
  for (const Setting& row : given.changed())
    if (row.has(Setting::kMeasureOnly))
      throw UsageError(fmt::format(
          "{} measures the evaluation by lengths; --stream scores each position of one text "
          "(stream.csv) and takes no such flag",
          row.flag_name()));
}

std::string csv_header() {
  return "first_position,last_position,tokens,cross_entropy,bits_per_character,perplexity,"
         "seconds,tokens_per_second,cache_bytes,resident_bytes\n";
}

}  // namespace

int run_stream(const StreamOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  // ---- every mistake before anything is written
  if (o.chunk < 1)
    throw UsageError(fmt::format("--stream-chunk must be at least 1, got {}", o.chunk));
  if (o.max_tokens < 0)
    throw UsageError(fmt::format("--stream-tokens must be at least 0 (0: the whole source), got {}",
                                 o.max_tokens));
  refuse_measurements(o.attention);
  check_attention_without_test_set(o.attention, "a stream");
  std::optional<CorpusPin> pin;
  TaskKind task{};
  const RunRecord record = open_completed_run(o.run_dir, task, pin);
  const TrainSpec& trained = record.spec;
  if (!task_reads_corpus(task))
    throw UsageError(fmt::format(
        "the run in {} is task '{}': --stream reads a text through a text run's model (task "
        "text); evaluate this run by lengths (leave --stream out)",
        o.run_dir.string(), trained.task));
  const ResolvedSpec resolved = resolve_completed(o.run_dir, trained);
  const ModelConfig& config = resolved.model;
  const TextCorpus& corpus = *pin->corpus();
  const Source source = stream_source(o.source, corpus);
  const TokenText vocabulary(task, trained.token, &corpus);
  const std::vector<int> tokens =
      vocabulary.parse(source.text, fmt::format("--stream {}", o.source));
  const int64_t available = static_cast<int64_t>(tokens.size()) - 1;  // BOS first
  const int64_t read = o.max_tokens > 0 ? std::min(o.max_tokens, available) : available;
  if (read + 1 > INT32_MAX)
    throw UsageError(fmt::format(
        "--stream {} holds {} characters, more than one stream reads ({}): give --stream-tokens",
        o.source, read, INT32_MAX - 1));
  StreamJob job;
  job.tokens = &tokens;
  job.n_tokens = read + 1;
  job.chunk = o.chunk;
  job.attention = test_time_attention(o.attention, trained, config.pe);
  if (positional_encoding_info(config.pe).learned_table() && job.n_tokens > config.max_positions)
    throw UsageError(fmt::format(
        "a stream of {} characters takes positions 0..{}, past the run's learned position table "
        "({} rows, trained with --l-test {}): read at most --stream-tokens {}",
        read, read, config.max_positions, trained.l_test, config.max_positions - 1));
  check_decode_memory(config, job.attention, job.n_tokens, resolved.float64, o.budget,
                      "read fewer characters (--stream-tokens)");
  if (o.out.empty()) throw UsageError("--out is required: the folder to write the stream into");
  if (!o.overwrite && (fs::exists(o.out / "stream.json") || fs::exists(o.out / "stream.csv")))
    throw UsageError(fmt::format(
        "{} already holds a stream (stream.csv); pass --overwrite to replace it, or choose "
        "another --out",
        o.out.string()));
  if (fs::exists(o.out / "manifest.json"))
    throw UsageError(
        fmt::format("{} holds a trained run (manifest.json); write the stream into another --out",
                    o.out.string()));
  for (const char* name : {"stream.csv", "stream.json"}) check_output_path(o.out / name, "--out's");
  const std::vector<double> params = load_checkpoint(o.run_dir / "model.safetensors", config);
  const Device device = Device::choose(o.device, resolved.float64);
  for_flag("--out", [&] { ensure_writable_directory(o.out); });
  remove_stale_temporaries(o.out);
  fs::remove(o.out / "stream.json");

  // ---- read, each chunk's row written as it ends
  std::ofstream csv(o.out / "stream.csv", std::ios::binary | std::ios::trunc);
  if (!csv) throw UsageError(fmt::format("cannot write {}", (o.out / "stream.csv").string()));
  csv << csv_header() << std::flush;
  if (o.log)
    *o.log << fmt::format("reading {} characters of {} ({}), chunks of {}\n", read, source.name,
                          device.label(), o.chunk);
  double nll = 0, seconds = 0;
  size_t cache_bytes = 0;
  const int threads = o.threads > 0 ? o.threads : trained.threads;
  device.stream(config, params, job, threads, resolved.float64, [&](const StreamChunk& c) {
    const double ce = c.nll_sum / c.tokens, rate = c.tokens / std::max(c.seconds, 1e-9);
    const int64_t resident = resident_memory_bytes();
    csv << fmt::format("{},{},{},{:.10g},{:.10g},{:.10g},{:.6f},{:.1f},{},{}\n", c.first_position,
                       c.last_position, c.tokens, ce, ce / std::log(2.0), std::exp(ce), c.seconds,
                       rate, c.cache_bytes, resident)
        << std::flush;
    if (!csv) throw SystemFailure(fmt::format("cannot write {}", (o.out / "stream.csv").string()));
    nll += c.nll_sum;
    seconds += c.seconds;
    cache_bytes = c.cache_bytes;
    if (o.log)
      *o.log << fmt::format(
          "positions {}..{}: {:.4f} nats per character (perplexity {:.3f}), {:.0f} tokens/s, "
          "cache {}, resident {}\n",
          c.first_position, c.last_position, ce, std::exp(ce), rate, format_bytes(c.cache_bytes),
          format_bytes(static_cast<double>(resident)));
  });
  csv.close();

  // ---- stream.json, last
  const double ce = nll / read;
  nlohmann::ordered_json info;
  info["lenlab_version"] = version();
  info["git_revision"] = git_revision();
  info["command_line"] = o.command_line;
  info["source"] = {{"dir", fs::absolute(o.run_dir).lexically_normal().string()},
                    {"id", record.id},
                    {"config", to_json(trained)}};
  info["stream"] = {{"source", o.source},
                    {"text", source.name},
                    {"corpus", corpus.path()},
                    {"characters", read},
                    {"of_characters", available},
                    {"chunk", o.chunk},
                    {"overlaps_training", o.source == "all" || o.source == "training"}};
  if (!o.attention.plain()) info["attention"] = attention_json(o.attention, job.attention);
  info["cross_entropy"] = ce;
  info["bits_per_character"] = ce / std::log(2.0);
  info["perplexity"] = std::exp(ce);
  info["cache_bytes"] = cache_bytes;
  info["peak_resident_bytes"] = peak_resident_memory_bytes();
  info["stream_seconds"] = seconds;
  info["tokens_per_second"] = read / std::max(seconds, 1e-9);
  info["threads"] = threads;
  info["device"] = device.label();
  info["status"] = "completed";
  info["wall_seconds"] = std::chrono::duration<double>(Clock::now() - start).count();
  info["files"] = {"stream.json", "stream.csv"};
  write_file_atomic(o.out / "stream.json", info.dump(2) + "\n");
  if (o.log)
    *o.log << fmt::format(
        "read {} characters in {:.1f} s: {:.4f} nats per character (perplexity {:.3f}); wrote "
        "{}/{{stream.csv, stream.json}}\n",
        read, seconds, ce, std::exp(ce), o.out.string());
  return 0;
}

}  // namespace lenlab
