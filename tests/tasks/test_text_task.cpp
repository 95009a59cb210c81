// The text task (tasks/text_corpus.hpp, tasks/token_tasks.hpp): a corpus's vocabulary, hash and
// split by blocks; windows drawn only from their split, deterministically; every bad corpus
// refused with its reason; a trained run's corpus hash checked by lenlab eval before anything is
// written.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "core/error.hpp"
#include "tasks/text_corpus.hpp"
#include "tasks/token_tasks.hpp"
#include "tests/support/cli_support.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;

namespace {

fs::path write_corpus(const std::string& name, const std::string& bytes) {
  const fs::path dir = fresh_dir("text", fmt::format("{}-{}", name, ::getpid()));
  const fs::path p = dir / "corpus.txt";
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

// 40 blocks of `block` bytes; block b is the letter 'A' + b % 20 repeated, so a window's letter
// says which residue of 20 (hence split) its block has.
std::string lettered_blocks(int block) {
  std::string s;
  for (int b = 0; b < 40; ++b) s += std::string(block, static_cast<char>('A' + b % 20));
  return s;
}

TokenTaskSettings text_settings(const fs::path& corpus) {
  TokenTaskSettings s;
  s.corpus = corpus.string();
  return s;
}

// The bytes of a batch's sequence s, BOS left out.
std::string sequence_bytes(const Batch& b, int s, const TextCorpus& corpus) {
  std::string out;
  for (int r = b.offsets[s] + 1; r < b.offsets[s + 1]; ++r)
    out += static_cast<char>(corpus.symbols().at(b.tokens[r]));
  return out;
}

}  // namespace

TEST_CASE(
    "text corpus: the vocabulary is the bytes it holds, in byte order, and the hash is FNV-1a") {
  const std::string text = "ba\xc3\xa9 ab\n" + std::string(40, 'a');  // é: two bytes
  const fs::path p = write_corpus("vocab", text);
  const TextCorpus c(p.string());
  CHECK(c.bytes() == static_cast<int64_t>(text.size()));
  CHECK(c.symbols() == std::vector<unsigned char>{'\n', ' ', 'a', 'b', 0xA9, 0xC3});
  CHECK(c.n_symbols() == 6);
  // FNV-1a 64 of the bytes, computed here byte by byte.
  uint64_t h = 1469598103934665603ULL;
  for (const char ch : text) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ULL;
  CHECK(c.hash() == fmt::format("fnv1a64:{:016x}", h));
  const TokenTaskSettings s = text_settings(p);
  CHECK(token_content_symbols(TaskKind::kText, s) == 6);
  CHECK(token_vocab_size(TaskKind::kText, s) == 7);  // the bytes and BOS
  CHECK(special_tokens(TaskKind::kText, s).bos == 6);
}

TEST_CASE("text corpus: blocks split 18 / 1 / 1 of every 20, and windows stay in their split") {
  // 40 blocks of 64 KiB, block b all letter 'A' + b % 20: test blocks 19 and 39 ('T'),
  // validation 18 and 38 ('S'), training the rest.
  const fs::path p = write_corpus("split", lettered_blocks(static_cast<int>(kCorpusBlock)));
  const auto corpus = open_corpus(p.string());
  CHECK(corpus->block_size() == kCorpusBlock);
  CHECK(corpus->split_bytes(CorpusSplit::kTrain) == 36 * kCorpusBlock);
  CHECK(corpus->split_bytes(CorpusSplit::kValidation) == 2 * kCorpusBlock);
  CHECK(corpus->split_bytes(CorpusSplit::kTest) == 2 * kCorpusBlock);
  const TokenTaskSettings s = text_settings(p);
  Rng rng(5);
  std::set<char> train_letters, test_letters;
  for (int step = 0; step < 50; ++step) {
    const Batch b = token_train_batch(TaskKind::kText, s, nullptr, 150, 16, rng);
    for (int q = 0; q < b.n_seq(); ++q)
      for (const char ch : sequence_bytes(b, q, *corpus)) train_letters.insert(ch);
  }
  for (const int length : {1, 50, 2048}) {
    const Batch b = token_eval_batch(TaskKind::kText, s, nullptr, length, 64, 11);
    for (int q = 0; q < b.n_seq(); ++q) {
      const std::string w = sequence_bytes(b, q, *corpus);
      CHECK(static_cast<int>(w.size()) == length);
      for (const char ch : w) test_letters.insert(ch);
    }
  }
  CHECK(test_letters == std::set<char>{'T'});
  for (const char held_out : {'S', 'T'}) CHECK(train_letters.count(held_out) == 0);
  CHECK(train_letters.size() == 18);  // every training block is drawn
}

TEST_CASE("text task: [BOS] then the window, every row answering the next byte, deterministic") {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += static_cast<char>('a' + (i * 7 + i / 13) % 26);
  const fs::path p = write_corpus("rows", text);
  const TokenTaskSettings s = text_settings(p);
  const int bos = special_tokens(TaskKind::kText, s).bos;
  Rng a(3), b(3);
  const Batch x = token_train_batch(TaskKind::kText, s, nullptr, 40, 8, a);
  const Batch y = token_train_batch(TaskKind::kText, s, nullptr, 40, 8, b);
  CHECK(x.tokens == y.tokens);
  CHECK(x.token.labels == y.token.labels);
  for (int q = 0; q < x.n_seq(); ++q) {
    const int first = x.offsets[q], L = x.offsets[q + 1] - first - 1;
    CHECK(x.tokens[first] == bos);
    CHECK(L >= 1);
    CHECK(L <= 40);
  }
  int r = 0;
  for (int q = 0; q < x.n_seq(); ++q)
    for (int row = x.offsets[q]; row + 1 < x.offsets[q + 1]; ++row, ++r) {
      CHECK(x.token.rows[r] == row);
      CHECK(x.token.labels[r] == x.tokens[row + 1]);
    }
  CHECK(r == x.token.size());
  CHECK(token_eval_batch(TaskKind::kText, s, nullptr, 64, 10, 7).tokens ==
        token_eval_batch(TaskKind::kText, s, nullptr, 64, 10, 7).tokens);
  CHECK(token_eval_batch(TaskKind::kText, s, nullptr, 64, 10, 7).tokens !=
        token_eval_batch(TaskKind::kText, s, nullptr, 64, 10, 8).tokens);
  CHECK(token_sequence_tokens(TaskKind::kText, s, 64) == 65);
  CHECK(token_answer_rows(TaskKind::kText, s, 64) == 64);
}

TEST_CASE("text corpus: a missing, empty, binary, non-UTF-8 or too small file is refused") {
  const fs::path dir = fresh_dir("text", fmt::format("bad-{}", ::getpid()));
  const auto refusal = [](const fs::path& p) {
    return usage_message([&] { TextCorpus c(p.string()); });
  };
  CHECK(refusal(dir / "missing.txt").find("cannot read corpus") != std::string::npos);
  CHECK(refusal(dir / "missing.txt").find("missing.txt") != std::string::npos);
  CHECK(refusal(dir).find("a directory") != std::string::npos);
  std::ofstream(dir / "empty.txt") << "";
  CHECK(refusal(dir / "empty.txt").find("is empty") != std::string::npos);
  std::ofstream(dir / "nul.bin", std::ios::binary) << std::string("plain text\0more", 15);
  CHECK(refusal(dir / "nul.bin").find("NUL byte at offset 10") != std::string::npos);
  std::ofstream(dir / "latin1.txt", std::ios::binary) << "caf\xe9 au lait, and more text";
  CHECK(refusal(dir / "latin1.txt").find("byte 0xe9 at offset 3 is not UTF-8") !=
        std::string::npos);
  std::ofstream(dir / "overlong.txt", std::ios::binary) << "\xc0\xaf and then plenty of text";
  CHECK(refusal(dir / "overlong.txt").find("byte 0xc0 at offset 0") != std::string::npos);
  std::ofstream(dir / "cut.txt", std::ios::binary) << "enough text to pass, cut: \xe2\x82";
  CHECK(refusal(dir / "cut.txt").find("is not UTF-8") != std::string::npos);
  std::ofstream(dir / "small.txt") << "too small";
  CHECK(refusal(dir / "small.txt").find("has 9 bytes") != std::string::npos);
  // A window longer than a block: named with the block's size.
  const fs::path p = write_corpus("window", std::string(2000, 'x'));  // blocks of 100
  const TokenTaskSettings s = text_settings(p);
  const std::string msg = usage_message([&] { check_token_task(TaskKind::kText, s, 1, 101); });
  CHECK(msg.find("a window of 101 characters") != std::string::npos);
  CHECK(msg.find("100 bytes") != std::string::npos);
  CHECK_NOTHROW(check_token_task(TaskKind::kText, s, 1, 100));
}

TEST_CASE("text corpus: a named pipe or a device is refused at once, never read") {
  const fs::path dir = fresh_dir("text", fmt::format("special-{}", ::getpid()));
  REQUIRE(::mkfifo((dir / "pipe.txt").c_str(), 0666) == 0);  // no writer: a read would block
  const std::string fifo = usage_message([&] { TextCorpus c((dir / "pipe.txt").string()); });
  CHECK(contains(fifo, "cannot read corpus " + (dir / "pipe.txt").string()));
  CHECK(contains(fifo, "a named pipe (FIFO)"));
  CHECK(contains(usage_message([&] { open_corpus("/dev/zero"); }), "a character device"));
}

TEST_CASE("a pinned corpus is what every reader gets, until its last pin goes") {
  const fs::path p = write_corpus("pin", lettered_blocks(100));  // 4000 bytes: blocks of 100
  const TokenTaskSettings s = text_settings(p);
  std::optional<CorpusPin> pin(std::in_place, p.string());
  const std::string pinned_hash = pin->corpus()->hash();
  const Batch before = token_eval_batch(TaskKind::kText, s, nullptr, 16, 10, 3);
  // The file replaced while a run holds it: another size, other bytes.
  std::ofstream(p, std::ios::binary) << std::string(5000, 'z');
  CHECK(open_corpus(p.string()).get() == pin->corpus().get());
  {
    const CorpusPin nested(p.string());  // pins of one path share the copy, and nest
    CHECK(nested.corpus().get() == pin->corpus().get());
  }
  CHECK(open_corpus(p.string())->hash() == pinned_hash);
  CHECK(token_content_symbols(TaskKind::kText, s) == 20);  // the letters A..T, not 'z'
  const Batch during = token_eval_batch(TaskKind::kText, s, nullptr, 16, 10, 3);
  CHECK(during.tokens == before.tokens);
  CHECK(sequence_bytes(during, 0, *pin->corpus()).find('z') == std::string::npos);
  pin.reset();  // the run is over: the file as it is now
  const auto now = open_corpus(p.string());
  CHECK(now->bytes() == 5000);
  CHECK(now->hash() != pinned_hash);
}

TEST_CASE("open_corpus reads a file once, and again only when it changed") {
  const fs::path p = write_corpus("cache", std::string(100, 'a'));
  const auto first = open_corpus(p.string());
  CHECK(open_corpus(p.string()).get() == first.get());  // one copy for every run of the process
  std::ofstream(p, std::ios::binary) << std::string(100, 'a') + "bc";
  const auto second = open_corpus(p.string());
  CHECK(second->bytes() == 102);
  CHECK(second->hash() != first->hash());
}

TEST_CASE(
    "lenlab train records the corpus, and lenlab eval refuses a changed one, writing nothing") {
  std::string text;
  for (int i = 0; i < 4000; ++i) text += "the cat sat. "[i % 13];
  const fs::path corpus = write_corpus("eval", text);
  const fs::path out = run_dir(fmt::format("text-run-{}", ::getpid()));
  const CliResult r = run_cli({"train",
                               "--task",
                               "text",
                               "--corpus",
                               corpus.string(),
                               "--steps",
                               "20",
                               "--l-train",
                               "16",
                               "--lengths",
                               "8,16,32",
                               "--eval-samples",
                               "8",
                               "--d-model",
                               "16",
                               "--n-head",
                               "2",
                               "--d-ff",
                               "32",
                               "--out",
                               (out / "run").string()});
  INFO("err: " << r.err);
  REQUIRE(r.rc == 0);
  const auto manifest = nlohmann::json::parse(read_text(out / "run" / "manifest.json"));
  const auto c = open_corpus(corpus.string());
  CHECK(manifest["corpus"]["hash"] == c->hash());
  CHECK(manifest["corpus"]["bytes"] == c->bytes());
  CHECK(manifest["corpus"]["symbols"] == 8);         // "the cat sat. ": t h e space c a s .
  CHECK(fs::exists(out / "run" / "positions.csv"));  // each position at the longest length
  // The same corpus: evaluated.
  CHECK(run_cli({"eval", (out / "run").string(), "--out", (out / "same").string()}).rc == 0);
  // A changed corpus: refused, both hashes named, nothing written.
  std::ofstream(corpus, std::ios::binary) << text + "!";
  const std::string changed = open_corpus(corpus.string())->hash();
  const CliResult e =
      run_cli({"eval", (out / "run").string(), "--out", (out / "changed").string()});
  CHECK(e.rc != 0);
  CHECK(e.err.find(c->hash()) != std::string::npos);
  CHECK(e.err.find(changed) != std::string::npos);
  CHECK_FALSE(fs::exists(out / "changed"));
}

TEST_CASE(
    "lenlab run on text: report.md gives perplexity at multiples of l_train, and finished runs are "
    "kept only while their corpus is unchanged") {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "in the beginning "[i % 17];
  const fs::path corpus = write_corpus("resume", text);
  const fs::path dir = run_dir(fmt::format("text-sweep-{}", ::getpid()));
  const fs::path config = dir / "text.toml";
  std::ofstream(config) << fmt::format(
      "seeds = [1]\n[defaults]\ntask = \"text\"\ncorpus = \"{}\"\nsteps = 10\nl_train = 16\n"
      "lengths = \"8,16,32\"\neval_samples = 4\nd_model = 16\nn_head = 2\nd_ff = 32\n"
      "[figures.a]\nvary = \"pe\"\nvalues = [\"nope\"]\n",
      corpus.string());
  const std::vector<std::string> args = {"run", config.string(), "--out", (dir / "out").string()};
  const CliResult first = run_cli(args);
  INFO("err: " << first.err);
  REQUIRE(first.rc == 0);
  // report.md's table of perplexity at multiples of l_train, from the run's results.csv: at 16
  // (l_train) and 32 (2×), none tested at 4×..16×.
  fs::path run;
  for (const auto& e : fs::directory_iterator(dir / "out" / "runs")) run = e.path();
  double ppl16 = 0, ppl32 = 0;
  for (const std::string& line : split(read_text(run / "results.csv"), '\n')) {
    const std::vector<std::string> cells = split(line, ',');
    if (cells.size() > 4 && cells[0] == "16") ppl16 = std::exp(std::stod(cells[4]));
    if (cells.size() > 4 && cells[0] == "32") ppl32 = std::exp(std::stod(cells[4]));
  }
  const std::string report = read_text(dir / "out" / "report.md");
  CHECK(report.find("Perplexity (per character) at multiples of l_train") != std::string::npos);
  const std::string row = fmt::format("| nope | {:.3g} | {:.3g} ({:+.1f} %) | — | — | — |", ppl16,
                                      ppl32, 100 * (ppl32 / ppl16 - 1));
  INFO("row: " << row);
  CHECK(report.find(row) != std::string::npos);
  const std::string trained = open_corpus(corpus.string())->hash();
  CHECK(run_cli(args).rc == 0);  // the same corpus: the finished run is kept
  std::ofstream(corpus, std::ios::binary) << text + "?";
  const std::string changed = open_corpus(corpus.string())->hash();
  const CliResult again = run_cli(args);
  CHECK(again.rc != 0);
  CHECK(again.err.find(trained) != std::string::npos);
  CHECK(again.err.find(changed) != std::string::npos);
}

TEST_CASE("the default corpus, where the build wrote one, is the King James Bible") {
  std::string path;
  try {
    path = corpus_path("");
  } catch (const UsageError& e) {
    MESSAGE("skipped: " << e.what());
    return;
  }
  const auto c = open_corpus("");
  CHECK(c->path() == path);
  CHECK(c->bytes() > 4'000'000);
  CHECK(c->block_size() == kCorpusBlock);
  CHECK(c->split_bytes(CorpusSplit::kTrain) + c->split_bytes(CorpusSplit::kValidation) +
            c->split_bytes(CorpusSplit::kTest) ==
        c->bytes());
  CHECK(c->longest_window(CorpusSplit::kTest) >= 2048);  // 16 × l_train 128 fits
  CHECK(c->n_symbols() < 100);  // English letters, digits of headings, punctuation
}
