// The attention statistics as a figure metric (results/figure_metric.hpp): attention.csv read back
// into a run's results (results/run_record.hpp), the metric's value, and the config's checks.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "results/figure_metric.hpp"
#include "results/length_files.hpp"
#include "results/run_record.hpp"
#include "train/attention_stats.hpp"
#include "train/temperature_search.hpp"

using namespace lenlab;

namespace {

// Two lengths of a 2-layer, 3-head model with distinct statistics everywhere.
std::vector<LengthResult> with_stats() {
  std::vector<LengthResult> rows(2);
  for (int i = 0; i < 2; ++i) {
    rows[i].length = 5 + i;
    rows[i].token = true;
    AttentionStats& a = rows[i].attention;
    a.n_layer = 2;
    a.n_head = 3;
    for (int k = 0; k < 6; ++k) {
      a.entropy.push_back(0.25 * k + i + 0.125);
      a.max_prob.push_back(0.9 - 0.1 * k - 0.01 * i);
    }
  }
  return rows;
}

std::vector<LengthResult> without_stats(const std::vector<LengthResult>& rows) {
  std::vector<LengthResult> out = rows;
  for (LengthResult& r : out) r.attention = AttentionStats{};
  return out;
}

}  // namespace

TEST_CASE("attention.csv reads back into the results it was written from") {
  const std::vector<LengthResult> rows = with_stats();
  std::vector<LengthResult> back = without_stats(rows);
  add_attention_csv(attention_csv_text(rows), "attention.csv", back);
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(back[i].attention.n_layer == 2);
    CHECK(back[i].attention.n_head == 3);
    for (size_t k = 0; k < 6; ++k) {
      CHECK(back[i].attention.entropy[k] == doctest::Approx(rows[i].attention.entropy[k]));
      CHECK(back[i].attention.max_prob[k] == doctest::Approx(rows[i].attention.max_prob[k]));
    }
  }
  // The metric is the mean over every layer and head, as the temperature search aligns it.
  double sum = 0;
  for (double e : rows[1].attention.entropy) sum += e;
  CHECK(metric_value(back[1], "attention_entropy") == doctest::Approx(sum / 6));
  CHECK(metric_value(back[1], "attention_max_prob") ==
        doctest::Approx(mean_statistic(rows[1].attention, AlignBy::kMaxProb)));
  CHECK(std::isnan(metric_value(without_stats(rows)[0], "attention_entropy")));
}

TEST_CASE("a malformed attention.csv is refused, naming the file") {
  const std::string good = attention_csv_text(with_stats());
  const auto refused = [](const std::string& text, std::vector<LengthResult> rows,
                          const std::string& says) {
    CAPTURE(text);
    try {
      add_attention_csv(text, "run/attention.csv", rows);
      FAIL("accepted");
    } catch (const UsageError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(says) != std::string::npos, e.what());
      CHECK(std::string(e.what()).find("run/attention.csv") != std::string::npos);
    }
  };
  refused("length,layer\n5,0\n", without_stats(with_stats()), "not a lenlab attention file");
  std::vector<LengthResult> one = without_stats(with_stats());
  one.pop_back();  // results.csv without length 6
  refused(good, one, "length 6 is not in results.csv");
  // A row left out: length 5 lacks layer 1 head 2.
  std::string cut = good;
  const size_t at = cut.find("\n5,,1,2,");
  REQUIRE(at != std::string::npos);
  cut.erase(at, cut.find('\n', at + 1) - at);
  refused(cut, without_stats(with_stats()), "lacks a layer or head");
}

TEST_CASE("an attention metric needs attention_stats = 1 and a length plot") {
  const std::string head = R"(seeds = [1]
[defaults]
task = "markov"
pe = "rope"
[figures.f]
vary = "settings"
metric = "attention_entropy"
)";
  const ExperimentConfig ok = parse_experiment_config(
      head +
          "attention_stats = 1\nvalues = [{ label = \"plain\" }, { label = \"w\", n_local = "
          "\"train\" }]\n",
      "c.toml");
  CHECK(ok.figures.at(0).metric == "attention_entropy");
  const auto refused = [&](const std::string& rest, const std::string& says) {
    try {
      parse_experiment_config(head + rest, "c.toml");
      FAIL("accepted");
    } catch (const UsageError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(says) != std::string::npos, e.what());
    }
  };
  refused("values = [{ label = \"plain\", attention_stats = 1 }, { label = \"w\" }]\n",
          "line settings = w does not measure them; set attention_stats = 1");
  refused("attention_stats = 1\nplot = \"position\"\nvalues = [{ label = \"plain\" }]\n",
          "with plot 'position'");
}
