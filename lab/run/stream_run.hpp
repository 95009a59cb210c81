#pragma once
// `lenlab eval RUN --stream SOURCE`: a text run reading one long text in a single pass through its
// key-value cache (train/stream_eval.hpp), LM-Infinite's test (paper 001 §5): does the
// cross-entropy stay flat far past the training window, in constant memory and time per token?
// SOURCE is a split of the run's corpus (test, validation, training: its blocks one after another)
// or all of it (all), or a file of the corpus's characters. Writes into --out:
//   stream.csv   a row per chunk of positions, written and flushed as each chunk ends (a killed
//                stream keeps the chunks it finished): first_position, last_position, tokens,
//                cross_entropy (nats per character), bits_per_character, perplexity, seconds,
//                tokens_per_second, cache_bytes (the key-value cache), resident_bytes (the
//                process's resident memory at the chunk's end)
//   stream.json  last, when the stream is read to its end: the source run, the text read, the
//                attention, the whole stream's cross-entropy, the process's peak resident memory,
//                the time, the device, the command line
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>

#include "cost/budget.hpp"
#include "train/inference_settings.hpp"

namespace lenlab {

inline constexpr int kDefaultStreamChunk = 4096;

struct StreamOptions {
  std::filesystem::path run_dir;    // a completed text run's folder
  std::filesystem::path out;        // where to write
  std::string source;               // test, validation, training, all, or a file's path
  int64_t max_tokens = 0;           // characters to read at most; 0 = the whole source
  int chunk = kDefaultStreamChunk;  // positions per row of stream.csv
  bool overwrite = false;
  std::string device = "auto";
  int threads = 0;              // 0 = the run's
  TestTimeAttention attention;  // as lenlab eval's; no measurement flag
  Budget budget;                // --max-memory bounds the cache and its tables
  std::string command_line;     // recorded in stream.json
  std::ostream* log = nullptr;  // a line per chunk and the summary; null = silent
};

// Returns 0. UsageError, before anything is written: no completed run or not a text run; a
// source that is no split, not readable, empty, or holds a byte outside the run's corpus (named,
// with its offset); a chunk < 1 or a negative --stream-tokens; a measurement flag or a setting
// measured on a test set; positions past a learned table; a cache and tables past --max-memory
// (saying how much they need); an --out holding a stream already (without --overwrite) or a
// trained run.
int run_stream(const StreamOptions& options);

}  // namespace lenlab
