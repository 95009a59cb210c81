// plot "temperature" from hand-made RunRecords (no training): the config's refusals, the curves'
// means over seeds, each criterion's τ and where it falls on the curve, the at-bound counts, the
// CSV's τ rows, the gnuplot script and report.md's table.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lab/experiment/experiment_config.hpp"
#include "plots/figure_data.hpp"
#include "plots/gnuplot.hpp"
#include "report/temperature_report.hpp"

using namespace lenlab;

namespace {

ExperimentConfig markov_config_of(const std::string& settings) {
  return parse_experiment_config(
      "seeds = [1, 2]\n[defaults]\ntask = \"markov\"\npe = \"rope\"\nl_train = 4\nl_test = 8\n"
      "[figures.t]\ntitle = \"T\"\nplot = \"temperature\"\n" +
          settings,
      "cfg.toml");
}

// A run whose search measured lengths 6 and 8 on the grid 1, 0.75, 0.5: excess_ce = base + (1 − τ)
// at 6, base + 2(1 − τ) at 8; Algorithm 1 (entropy) chose 0.75 at 6 and 0.5 (the low bound) at 8.
RunRecord searched_run(const FigureSpec& fig, uint64_t seed, double base) {
  RunRecord r;
  r.spec = fig.line_spec(0, seed);
  r.id = run_id(r.spec);
  r.status = "completed";
  for (const int length : {6, 8})
    for (const double tau : {1.0, 0.75, 0.5}) {
      TemperatureCurvePoint p;
      p.length = length;
      p.tau = tau;
      p.metrics["excess_ce"] = base + (length == 6 ? 1 : 2) * (1 - tau);
      p.metrics["attention_entropy"] = tau;
      r.temperature_curve.push_back(p);
    }
  r.temperature_by_length = {{6, 0.75}, {8, 0.5}};
  r.temperature_at_bound = {{8, "low"}};
  r.temperature_chosen["auto-entropy"] = {{6, 0.75}, {8, 0.5}};
  r.temperature_chosen["auto-pmax"] = {{6, 1.0}, {8, 0.75}};
  r.temperature_chosen["log_rule"] = {{6, 0.8}, {8, 0.6}};
  r.temperature_pmax_closed_form = {{6, 1.2}, {8, NAN}};  // above the grid; none
  r.temperature_entropy_closed_form = {{6, 0.9}, {8, 0.625}};
  return r;
}

}  // namespace

TEST_CASE("plot temperature: only lines with an auto temperature, any task") {
  CHECK_THROWS_WITH_AS(markov_config_of("vary = \"pe\"\nvalues = [\"rope\"]\n"),
                       doctest::Contains("plot 'temperature' draws the temperature search's "
                                         "curve, but line pe = rope has temperature '1'"),
                       UsageError);
  CHECK_NOTHROW(markov_config_of("vary = \"temperature\"\nvalues = [\"auto-pmax\"]\n"));
  CHECK_NOTHROW(
      markov_config_of("task = \"length\"\nvary = \"temperature\"\nvalues = [\"auto-pmax\"]\n"));
  // Its attention statistics come with the curve: no attention_stats needed.
  CHECK_NOTHROW(
      markov_config_of("metric = \"attention_entropy\"\nvary = \"temperature\"\n"
                       "values = [\"auto-entropy\"]\n"));
}

TEST_CASE("plot temperature: curves over seeds, each criterion on its curve, bounds counted") {
  const ExperimentConfig c =
      markov_config_of("vary = \"temperature\"\nvalues = [\"auto-entropy\"]\n");
  const FigureSpec& fig = c.figures.front();
  std::map<std::string, RunRecord> runs;
  for (const auto& [seed, base] : {std::pair{uint64_t{1}, 0.1}, std::pair{uint64_t{2}, 0.3}}) {
    RunRecord r = searched_run(fig, seed, base);
    runs[r.id] = r;
  }
  const FigureSummary s = summarize_figure(fig, c.seeds, runs);
  REQUIRE(s.lines.size() == 1);
  const std::vector<TemperatureCurve>& curves = s.lines[0].temperature;
  REQUIRE(curves.size() == 2);
  const TemperatureCurve& at8 = curves[1];
  CHECK(at8.length == 8);
  CHECK(at8.tau == std::vector<double>{1.0, 0.75, 0.5});
  CHECK(at8.value_mean[2] == doctest::Approx(0.2 + 1.0));  // mean of 0.1 and 0.3, + 2·0.5
  CHECK(at8.value_min[2] == doctest::Approx(1.1));
  CHECK(at8.value_max[2] == doctest::Approx(1.3));
  CHECK(at8.runs == 2);
  CHECK(at8.at_low_bound == 2);
  CHECK(curves[0].at_low_bound == 0);
  CHECK(at8.chosen.at("auto-pmax") == 0.75);
  CHECK(at8.chosen.at("proposition_2") == 0.625);
  CHECK(std::isnan(at8.chosen.at("proposition_1")));
  // Between grid points the curve is interpolated; outside the grid it has no value.
  CHECK(temperature_curve_at(at8, 0.625) == doctest::Approx(0.2 + 0.75));
  CHECK(std::isnan(temperature_curve_at(curves[0], 1.2)));

  const std::string csv = figure_csv(s);
  CHECK(csv.find(",misalignment_perfect,tau\n") != std::string::npos);
  size_t rows = 0;
  for (char ch : csv) rows += ch == '\n';
  CHECK(rows == 1 + 2 * 6);  // header, then (seed, length, τ)
  CHECK(csv.find(",8,,,,,0,,,,,,1.1,,,,,,0.5\n") != std::string::npos);

  const std::string gp = figure_gnuplot_script(s, {});
  CHECK(gp.find("title 'Algorithm 1, entropy'") != std::string::npos);
  CHECK(gp.find("title 'length 8'") != std::string::npos);
  const std::string dat = figure_dat(s, {});
  CHECK(dat.find("0.625 0.95 8\n") != std::string::npos);  // Proposition 2's point at length 8

  const std::string report = temperature_section(s);
  CHECK(report.find("| auto-entropy | 8 | 0.2 | 1 (0.2) |") != std::string::npos);
  CHECK(report.find("1.2 (off the grid)") != std::string::npos);
  CHECK(report.find("low 2/2") != std::string::npos);
  CHECK(report.find("Proposition 2 beat τ = 1 at 0 of 2") != std::string::npos);
  CHECK(report.find("in 2 of 4 (length, seed) searches") != std::string::npos);
}
