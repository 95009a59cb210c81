// Reading, checking and splitting a text corpus (tasks/text_corpus.hpp).
#include "tasks/text_corpus.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "core/text_rule.hpp"

#ifndef LENLAB_DEFAULT_CORPUS
#define LENLAB_DEFAULT_CORPUS ""
#endif

namespace lenlab {
namespace {

constexpr int64_t kMinCorpusBytes = kCorpusBlocksPerCycle;

// UsageError unless `text` is UTF-8 without NUL bytes.
void check_text(const std::string& text, const std::string& path) {
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\0')
      throw UsageError(fmt::format(
          "corpus {}: a NUL byte at offset {}: a binary file, not text (--corpus takes a UTF-8 "
          "text file)",
          path, i));
    const size_t n = utf8_length(text, i);
    if (n == 0)
      throw UsageError(fmt::format(
          "corpus {}: byte 0x{:02x} at offset {} is not UTF-8 (--corpus takes a UTF-8 text file; "
          "convert it, e.g. with iconv)",
          path, static_cast<unsigned char>(text[i]), i));
    i += n;
  }
}

std::string fnv1a64(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return fmt::format("fnv1a64:{:016x}", h);
}

}  // namespace

std::string corpus_split_name(CorpusSplit split) {
  switch (split) {
    case CorpusSplit::kTrain:
      return "training";
    case CorpusSplit::kValidation:
      return "validation";
    case CorpusSplit::kTest:
      return "test";
  }
  return "?";
}

TextCorpus::TextCorpus(const std::string& path) : path_(path) {
  // One buffer, read once: the corpus is in memory once. A named pipe, a device or a directory is
  // refused at once (read_regular_file), never waited on or read without end.
  try {
    text_ = read_regular_file(path, kLargeFileLimit, "corpus");
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " (--corpus takes a UTF-8 text file)");
  }
  if (text_.empty()) throw UsageError(fmt::format("corpus {} is empty", path));
  check_text(text_, path);
  if (bytes() < kMinCorpusBytes)
    throw UsageError(fmt::format(
        "corpus {} has {} bytes; it is split into {} blocks (training, validation and test), so "
        "it needs at least {}",
        path, bytes(), kCorpusBlocksPerCycle, kMinCorpusBytes));
  hash_ = fnv1a64(text_);
  std::array<bool, 256> seen{};
  for (const char c : text_) seen[static_cast<unsigned char>(c)] = true;
  token_of_.fill(-1);
  for (int b = 0; b < 256; ++b)
    if (seen[b]) {
      token_of_[b] = static_cast<int32_t>(symbols_.size());
      symbols_.push_back(static_cast<unsigned char>(b));
    }
  block_ = std::min(kCorpusBlock, bytes() / kCorpusBlocksPerCycle);
  const int64_t n_blocks = bytes() / block_;
  for (int64_t b = 0; b < n_blocks; ++b) block_begin_.push_back(b * block_);
  block_begin_.push_back(bytes());  // the last block takes the remainder
  for (int64_t b = 0; b < n_blocks; ++b) {
    const int64_t r = b % kCorpusBlocksPerCycle;
    const CorpusSplit split = r == kCorpusBlocksPerCycle - 1   ? CorpusSplit::kTest
                              : r == kCorpusBlocksPerCycle - 2 ? CorpusSplit::kValidation
                                                               : CorpusSplit::kTrain;
    split_blocks_[static_cast<int>(split)].push_back(b);
  }
}

const std::vector<int64_t>& TextCorpus::blocks(CorpusSplit split) const {
  return split_blocks_[static_cast<int>(split)];
}

int64_t TextCorpus::longest_window(CorpusSplit split) const {
  int64_t shortest = bytes();
  for (const int64_t b : blocks(split))
    shortest = std::min(shortest, block_begin_[b + 1] - block_begin_[b]);
  return shortest;
}

int64_t TextCorpus::split_bytes(CorpusSplit split) const {
  int64_t n = 0;
  for (const int64_t b : blocks(split)) n += block_begin_[b + 1] - block_begin_[b];
  return n;
}

std::string TextCorpus::split_text(CorpusSplit split) const {
  std::string out;
  out.reserve(static_cast<size_t>(split_bytes(split)));
  for (const int64_t b : blocks(split))
    out.append(text_, static_cast<size_t>(block_begin_[b]),
               static_cast<size_t>(block_begin_[b + 1] - block_begin_[b]));
  return out;
}

void TextCorpus::check_window(CorpusSplit split, int length) const {
  if (length < 1 || length > longest_window(split))
    throw UsageError(fmt::format(
        "text: a window of {} characters does not fit in the corpus's {} blocks ({} bytes "
        "each; corpus {} of {} bytes, cut into {} blocks): use lengths up to {}, or a larger "
        "corpus (--corpus)",
        length, corpus_split_name(split), longest_window(split), path_, bytes(),
        block_begin_.size() - 1, longest_window(split)));
}

void TextCorpus::append_window(CorpusSplit split, int length, Rng& rng,
                               std::vector<int32_t>& tokens) const {
  check_window(split, length);
  const std::vector<int64_t>& in = blocks(split);
  const int64_t b =
      in[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(in.size()) - 1))];
  const int64_t begin = rng.uniform_int(block_begin_[b], block_begin_[b + 1] - length);
  for (int64_t i = begin; i < begin + length; ++i)
    tokens.push_back(token_of_[static_cast<unsigned char>(text_[static_cast<size_t>(i)])]);
}

namespace {

// An installed lenlab's default corpus. The pip package (python/build_backend) installs it as
// <prefix>/share/lenlab/kjv.txt, where <prefix> holds bin/lenlab and
// lib/pythonX.Y/site-packages/lenlab/_lenlab*.so. <prefix> is found from the file holding this
// code: four folders above the Python module, one above the program. In a build folder there is
// no such file, and the build's own copy (LENLAB_DEFAULT_CORPUS) is the default.
std::filesystem::path installed_corpus() {
  namespace fs = std::filesystem;
  static const char anchor = 0;
  Dl_info info{};
  if (dladdr(&anchor, &info) != 0 && info.dli_fname != nullptr &&
      fs::path(info.dli_fname).filename().string().find(".so") != std::string::npos) {
    std::error_code error;
    const fs::path module = fs::absolute(info.dli_fname, error);
    return (module.parent_path() / "../../../../share/lenlab/kjv.txt").lexically_normal();
  }
  std::error_code error;
  const fs::path program = fs::read_symlink("/proc/self/exe", error);
  if (error) return {};
  return (program.parent_path() / "../share/lenlab/kjv.txt").lexically_normal();
}

}  // namespace

std::string corpus_path(const std::string& setting) {
  if (!setting.empty()) return setting;
  // LENLAB_CORPUS=FILE names the default corpus where it is neither installed nor built (an
  // install moved by hand, `pip install --target`); then an installed lenlab's, then the build's.
  if (const char* env = std::getenv("LENLAB_CORPUS"); env != nullptr && *env != '\0') return env;
  std::error_code error;
  const std::string installed = installed_corpus().string();
  if (!installed.empty() && std::filesystem::exists(installed, error)) return installed;
  const std::string built = LENLAB_DEFAULT_CORPUS;
  if (!built.empty() && std::filesystem::exists(built, error)) return built;
  if (built.empty())
    throw UsageError(fmt::format(
        "text: no --corpus given, and this build has no default corpus: it is the King James "
        "Bible, written at build time by Debian's `bible` program (package bible-kjv; "
        "scripts/install-deps.sh installs it, then rebuild), or pass --corpus FILE (no installed "
        "one at {} either; LENLAB_CORPUS=FILE names one)",
        installed));
  throw UsageError(fmt::format(
      "text: no --corpus given, and the default corpus is neither at {} (the build's) nor at {} "
      "(an install's): rebuild lenlab or install it again, set LENLAB_CORPUS=FILE, or pass "
      "--corpus FILE",
      built, installed));
}

namespace {

// What pins hold: a path's pinned copy and how many pins hold it (guarded by corpus_mutex).
struct Pinned {
  std::shared_ptr<const TextCorpus> corpus;
  int count = 0;
};

std::mutex corpus_mutex;
std::map<std::string, Pinned> pinned;

}  // namespace

std::shared_ptr<const TextCorpus> open_corpus(const std::string& setting) {
  const std::string path = corpus_path(setting);
  {
    std::lock_guard<std::mutex> lock(corpus_mutex);
    if (const auto it = pinned.find(path); it != pinned.end()) return it->second.corpus;
  }
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  const auto time = std::filesystem::last_write_time(path, error);
  using Key = std::tuple<std::string, uintmax_t, std::filesystem::file_time_type>;
  static std::map<Key, std::shared_ptr<const TextCorpus>> cache;
  if (error) return std::make_shared<const TextCorpus>(path);  // it throws, naming the reason
  const Key key{path, size, time};
  std::lock_guard<std::mutex> lock(corpus_mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  // A file rewritten in place: the old copy goes before the new one is read.
  for (auto old = cache.begin(); old != cache.end();)
    old = std::get<0>(old->first) == path ? cache.erase(old) : std::next(old);
  return cache.emplace(key, std::make_shared<const TextCorpus>(path)).first->second;
}

CorpusPin::CorpusPin(const std::string& setting) : path_(corpus_path(setting)) {
  // Read (or found pinned or cached) before the lock: open_corpus takes it too.
  std::shared_ptr<const TextCorpus> now = open_corpus(setting);
  std::lock_guard<std::mutex> lock(corpus_mutex);
  Pinned& pin = pinned[path_];
  if (!pin.corpus) pin.corpus = std::move(now);  // else another pin came first: share its copy
  ++pin.count;
  corpus_ = pin.corpus;
}

CorpusPin::~CorpusPin() {
  std::lock_guard<std::mutex> lock(corpus_mutex);
  const auto it = pinned.find(path_);
  if (it != pinned.end() && --it->second.count == 0) pinned.erase(it);
}

}  // namespace lenlab
