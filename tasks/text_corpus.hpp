#pragma once
// A text corpus: the `text` token task's source (tasks/token_tasks.hpp), next-byte prediction on
// windows of a UTF-8 file.
//
// The vocabulary is the bytes the corpus holds, in byte order: byte b is token rank(b) among them
// (the task adds BOS after them). The corpus is split deterministically by blocks, so that every
// split samples the whole text (a book's last chapters are not all test): the file is cut into
// blocks of kCorpusBlock bytes (of bytes / kCorpusBlocksPerCycle for a corpus under
// kCorpusBlocksPerCycle blocks of that size; the last block takes the remainder), and block b goes
// to the test split when b % 20 == 19, to validation when b % 20 == 18, to training otherwise (90 /
// 5 / 5 %). A window of L characters lies inside one block of its split, so no window straddles
// two splits; windows are drawn by a block uniformly among the split's blocks, then a start
// uniformly in that block.
//
// The file is read once, into one buffer (a 100 MB corpus takes 100 MB); open_corpus keeps each
// corpus read in this process, keyed by path, size and modification time, so runs side by side
// share it. A run pins its corpus (CorpusPin) for its whole life: training, evaluation and the
// manifest's hash then use the bytes read at its start, even if the file is replaced meanwhile.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"

namespace lenlab {

inline constexpr int64_t kCorpusBlock = 65536;
inline constexpr int kCorpusBlocksPerCycle = 20;

enum class CorpusSplit { kTrain, kValidation, kTest };
std::string corpus_split_name(CorpusSplit split);  // "training", "validation", "test"

class TextCorpus {
 public:
  // Reads `path`; UsageError naming the file for one that cannot be read, is empty, holds a NUL
  // byte or is not UTF-8 (naming the byte and its offset), or is under 20 bytes (one per block).
  explicit TextCorpus(const std::string& path);

  const std::string& path() const { return path_; }
  int64_t bytes() const { return static_cast<int64_t>(text_.size()); }
  // "fnv1a64:" and the 16 hex digits of the 64-bit FNV-1a hash of the bytes: what a run's
  // manifest stores, and lenlab eval compares.
  const std::string& hash() const { return hash_; }
  int n_symbols() const { return static_cast<int>(symbols_.size()); }
  // The byte of each token, in token order (sorted).
  const std::vector<unsigned char>& symbols() const { return symbols_; }
  int64_t block_size() const { return block_; }
  // The longest window a split holds (the shortest of its blocks).
  int64_t longest_window(CorpusSplit split) const;
  // The bytes of a split, summed over its blocks.
  int64_t split_bytes(CorpusSplit split) const;
  // The whole text, and a split's blocks in order, one after another (the text jumps at each
  // block's end: lenlab eval --stream reads a split so).
  const std::string& text() const { return text_; }
  std::string split_text(CorpusSplit split) const;

  // UsageError unless a window of `length` characters fits in every block of `split`, naming the
  // length, the block size and the corpus.
  void check_window(CorpusSplit split, int length) const;
  // Appends the tokens of one window of `length` characters of `split` drawn from rng (two
  // uniform_int calls), after check_window.
  void append_window(CorpusSplit split, int length, Rng& rng, std::vector<int32_t>& tokens) const;

 private:
  const std::vector<int64_t>& blocks(CorpusSplit split) const;

  std::string path_, text_, hash_;
  std::vector<unsigned char> symbols_;
  std::array<int32_t, 256> token_of_{};
  int64_t block_ = 0;
  std::vector<int64_t> block_begin_;  // [n_blocks + 1] offsets into text_
  std::array<std::vector<int64_t>, 3> split_blocks_;
};

// The corpus at `path` (the default corpus for ""), read once per process and kept while its
// file's size and modification time stay the same; while a CorpusPin holds that path, the pinned
// copy, whatever the file now holds.
std::shared_ptr<const TextCorpus> open_corpus(const std::string& path);

// Holds the corpus a setting names as it is read now (open_corpus) and makes every open_corpus of
// that setting return this copy until the last pin of it is destroyed: a run pins its corpus
// before it writes its manifest, so that a file replaced during training cannot change the data
// it trains or is evaluated on, nor the hash it records. Pins of one path nest (counted).
class CorpusPin {
 public:
  explicit CorpusPin(const std::string& setting);
  ~CorpusPin();
  CorpusPin(const CorpusPin&) = delete;
  CorpusPin& operator=(const CorpusPin&) = delete;

  const std::shared_ptr<const TextCorpus>& corpus() const { return corpus_; }

 private:
  std::string path_;
  std::shared_ptr<const TextCorpus> corpus_;
};

// The corpus a `corpus` setting names: the setting itself, or for "" the default one the build
// wrote from Debian's bible-kjv (the King James Bible, docs/tasks.md); UsageError saying how to get
// it when the build found no `bible` program.
std::string corpus_path(const std::string& setting);

}  // namespace lenlab
