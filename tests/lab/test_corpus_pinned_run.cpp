// A text run reads its corpus once (tasks/text_corpus.hpp's CorpusPin, held by
// lab/run/run_group_impl.hpp): the file replaced in the middle of training changes neither what
// the run trains and is evaluated on nor the hash its manifest records.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "lab/run/run_train.hpp"
#include "tasks/text_corpus.hpp"
#include "tests/support/cli_support.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;

namespace {

std::string repeated(const std::string& unit, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += unit[static_cast<size_t>(i) % unit.size()];
  return s;
}

TrainSpec text_spec(const fs::path& corpus) {
  TrainSpec s = tiny_spec();
  s.task = "text";
  s.token.corpus = corpus.string();
  s.steps = 20;
  s.l_train = 16;
  s.lengths = "8,16,32";
  s.l_test = 32;
  s.eval_samples = 8;
  return s;
}

}  // namespace

TEST_CASE("a corpus replaced during training changes neither the run's results nor its hash") {
  const fs::path dir = run_dir(fmt::format("corpus-pin-{}", ::getpid()));
  const fs::path corpus = dir / "corpus.txt";
  const std::string original = repeated("the cat sat. ", 4000);
  // The same bytes in another order, and more of them: another hash, other windows.
  const std::string replacement = repeated("sat. the cat ", 4100);
  std::ofstream(corpus, std::ios::binary) << original;

  RunOptions plain;
  plain.out = dir / "plain";
  REQUIRE(run_train(text_spec(corpus), plain) == kExitOk);
  const std::string original_hash = open_corpus(corpus.string())->hash();

  RunOptions replaced;
  replaced.out = dir / "replaced";
  bool swapped = false;
  replaced.on_work_done = [&](double) {  // the first training step's work: replace the file
    if (swapped) return;
    swapped = true;
    std::ofstream(corpus, std::ios::binary | std::ios::trunc) << replacement;
  };
  REQUIRE(run_train(text_spec(corpus), replaced) == kExitOk);
  REQUIRE(swapped);
  CHECK(open_corpus(corpus.string())->bytes() == static_cast<int64_t>(replacement.size()));

  const auto manifest = nlohmann::json::parse(read_text(replaced.out / "manifest.json"));
  CHECK(manifest["corpus"]["hash"] == original_hash);
  CHECK(manifest["corpus"]["bytes"] == original.size());
  // Trained and evaluated on the bytes read at the start: the same numbers as the plain run.
  CHECK(read_text(replaced.out / "results.csv") == read_text(plain.out / "results.csv"));
  CHECK(read_text(replaced.out / "loss.csv") == read_text(plain.out / "loss.csv"));
  // The file now holds other text: evaluating the run on it is refused.
  const CliResult e = run_cli({"eval", replaced.out.string(), "--out", (dir / "eval").string()});
  CHECK(e.rc == 2);
  CHECK(contains(e.err, original_hash));
}
