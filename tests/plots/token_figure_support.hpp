#pragma once
// What the token figures' tests share: small configs and fake runs
// (tests/plots/test_token_figure*.cpp).
#include <doctest/doctest.h>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>
#include "core/error.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"
#include "report/report.hpp"
#include "report/theory_overlay.hpp"
#include "report/token_report.hpp"
#include "tests/support/test_support.hpp"

namespace lenlab::test {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A config with one figure [figures.x] of `settings` (TOML lines) over two seeds.
inline ExperimentConfig config_of(const std::string& settings) {
  return parse_experiment_config(
      "seeds = [1, 2]\n[defaults]\nl_train = 6\nl_test = 8\n[figures.x]\ntitle = \"T\"\n" +
          settings,
      "cfg.toml");
}

inline LengthResult token_row(int length, double depth, double accuracy, double exact = 0,
                              double ce = 1, double excess = kNaN) {
  LengthResult r;
  r.token = true;
  r.length = length;
  r.depth = depth;
  r.token_accuracy = accuracy;
  r.exact_match = exact;
  r.cross_entropy = ce;
  r.excess_ce = excess;
  r.n_sequences = 10;
  r.n_answer_tokens = 4;
  return r;
}

// Completed runs of a figure, keyed by their ids as summarize_figure looks them up.
struct Runs {
  const FigureSpec* fig;
  std::map<std::string, RunRecord> by_id;
  RunRecord& add(size_t line, uint64_t seed, std::vector<LengthResult> rows,
                 double train_loss = 0.25) {
    RunRecord r;
    r.spec = fig->line_spec(line, seed);
    r.id = run_id(r.spec);
    r.status = "completed";
    r.final_train_loss = train_loss;
    r.results = std::move(rows);
    return by_id[r.id] = r;
  }
};

// Passkey, lines nope and rope, seeds 1 and 2, lengths 5 and 6 at depths 0, 0.5, 1; seed 1 has a
// cell at random depths at length 5 and misses depth 1 at length 6; seed 2 of nope stops at 5.
struct Passkey {
  ExperimentConfig config;
  Runs runs;
};
inline Passkey passkey(const std::string& extra = "") {
  Passkey p{config_of("task = \"passkey\"\nvary = \"pe\"\nvalues = [\"nope\", \"rope\"]\n" + extra),
            {}};
  p.runs.fig = &p.config.figures.front();
  for (size_t line = 0; line < 2; ++line) {
    const double shift = line == 0 ? 0.0 : 0.05;
    p.runs.add(line, 1,
               {token_row(5, kNoDepth, 0.2 + shift, 0.1), token_row(5, 0, 0.9 + shift / 2, 0.8),
                token_row(5, 0.5, 0.6 + shift, 0.4), token_row(5, 1, 0.3 + shift, 0.2),
                token_row(6, 0, 1.0, 1.0), token_row(6, 0.5, 1.0, 0.5)},
               0.5);
    std::vector<LengthResult> seed2 = {token_row(5, 0, 1.0, 1.0), token_row(5, 0.5, 0.5, 0.25),
                                       token_row(5, 1, 0.0, 0.0)};
    if (line == 1)
      for (double d : {0.0, 0.5, 1.0}) seed2.push_back(token_row(6, d, 0.7, 0.1));
    p.runs.add(line, 2, seed2, 0.25);
  }
  return p;
}

// Markov, one line, plot "position": two seeds, three positions at test length 3.
struct Markov {
  ExperimentConfig config;
  Runs runs;
};
inline Markov markov() {
  Markov m{config_of("task = \"markov\"\nvary = \"pe\"\nvalues = [\"nope\"]\nplot = "
                     "\"position\"\nl_train = 2\nl_test = 3\n"),
           {}};
  m.runs.fig = &m.config.figures.front();
  const double ce[2][3] = {{2.8, 1.5, 1.0}, {2.9, 1.3, 1.25}};
  // The excess subtracts the chain's loss on the test tokens, not its expectation H_t.
  const double chain_ce[3] = {2.77, 1.2, 1.05};
  const double entropy[3] = {2.8, 1.25, 1.1};
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    RunRecord& r = m.runs.add(0, seed, {token_row(3, kNoDepth, 0.5, 0.1, 1.9, 0.1)});
    for (int t = 0; t < 3; ++t)
      r.positions.push_back({t + 1, ce[seed - 1][t], entropy[t], 0.25 * (t + 1), chain_ce[t]});
  }
  return m;
}

inline std::string error_of(const std::string& settings) {
  try {
    config_of(settings);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace lenlab::test
