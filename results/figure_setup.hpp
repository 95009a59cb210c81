#pragma once
// The figures of an experiment, as its config defines them (lab/experiment/experiment_config.hpp
// parses the TOML): which setting each figure varies, its lines, and the settings of every line.
// plots/ and lab/ both read these, so they live below both.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "train/run_settings.hpp"

namespace lenlab {

// vary = "settings": each value is a table of settings with a `label`, e.g.
// { label = "Λ + cap", n_local = "train", n_global = 1, distance_cap = "train" }, so that a line
// can change several settings at once (a method, or a pair of methods).
inline constexpr const char* kVarySettings = "settings";

// A config's [select] table (lab/experiment/experiment_config.hpp): training settings tried for
// every line and seed of every figure, each combination a run with --validate; the figures keep,
// per line and seed, the run with the best validation score (plots/figure_data.cpp), never
// looking at a test length.
struct SettingGrid {
  std::vector<std::string> keys;                            // e.g. "lr", "warmup_steps"
  std::vector<std::vector<nlohmann::ordered_json>> values;  // per key, the values tried
  bool empty() const { return keys.empty(); }
  // Combinations: the product of the values' counts (1 when empty: the line itself).
  size_t size() const;
  // Combination i as {key: value}, the last key changing fastest.
  nlohmann::ordered_json point(size_t i) const;
};

struct FigureSpec {
  std::string name;  // the table's key, e.g. "1a"
  std::string title;
  std::string vary;                            // a setting key, or kVarySettings
  std::vector<nlohmann::ordered_json> values;  // one per line, in the order given
  TrainSpec base;                              // [defaults] with the figure's own settings applied
  // What the figure draws (config keys `plot` and `metric`):
  //   plot "length" (default): the metric against test length, a line per value of `vary`;
  //   plot "depth": passkey only: the metric as a length × depth heatmap, a panel per line;
  //   plot "position": markov only: the excess cross-entropy against position at the longest
  //     test length (RunRecord::positions), a line per value;
  //   plot "misalignment": every run's metric at one test length (at_length) against its
  //     long-short misalignment at l_train (train/misalignment.hpp), with the correlation across
  //     runs (paper 000's Table 1), a point per run.
  // metric: "mse" (scalar tasks, the default for them), "token_accuracy" (the default for token
  // tasks but markov), "exact_match", "cross_entropy" or "excess_ce" (markov, its default) —
  // LengthResult's fields (results/figure_metric.hpp has the lists and the rules).
  std::string plot = "length";
  // Never empty once parse_experiment_config has checked the figure: a config without `metric`
  // gets its lines' default. plots/ refuses an empty one (a FigureSpec made by hand must say).
  std::string metric;
  // Plot "misalignment" only (config key `at_length`): the test length whose metric is each
  // point's y; every line tests it. 0 for the other plots. plots/ refuses 0 on a misalignment
  // figure (parse_experiment_config always sets it: by default the lines' longest test length).
  int at_length = 0;
  // Config key `baseline` (plot "length" only): the label of the line the others are compared to
  // in report.md's method comparison (report/comparison_report.hpp); empty: not compared.
  std::string baseline;
  // Plot "misalignment" only (config key `pool`): the figures whose lines this one gathers, in
  // the order given, after its own lines (values; none when the figure has no vary): line
  // values.size() + k is pooled[pooled_lines[k].first]'s line pooled_lines[k].second, labelled
  // "figure: value". Empty: only the figure's own vary and values.
  std::vector<FigureSpec> pooled;
  std::vector<std::pair<size_t, size_t>> pooled_lines;
  // Config key `seeds`: this figure's own seeds in place of the experiment's (e.g. more for a
  // comparison whose ranking must beat the seed spread); empty: the experiment's. `--seeds N`
  // replaces them too (use_only_experiment_seeds).
  std::vector<uint64_t> seeds;
  size_t n_lines() const { return values.size() + pooled_lines.size(); }
  // Whether line i comes from another figure through `pool` (its label names that figure).
  bool is_pooled(size_t line) const { return line >= values.size(); }
  // The seeds line i is run with: the figure's own `seeds`, else the experiment's; when the
  // figure varies the seed itself (vary = "seed"), its value alone.
  std::vector<uint64_t> line_seeds(size_t line, const std::vector<uint64_t>& seeds) const;
  // The settings of line i (base with vary = values[i]) for one of its seeds.
  TrainSpec line_spec(size_t line, uint64_t seed) const;
  // The config's [select] grid (empty: none): every line and seed runs each combination.
  SettingGrid grid;
  // The runs of line i for one seed: line_spec alone without a grid; with one, line_spec with
  // each combination applied and validate = 1, in grid order.
  std::vector<TrainSpec> line_candidates(size_t line, uint64_t seed) const;
  // The value as text, e.g. "rope" or "15"; a pooled line's is "figure: value", e.g. "vcl: 4".
  std::string line_label(size_t line) const;
};

struct ExperimentConfig {
  std::vector<uint64_t> seeds;
  std::vector<FigureSpec> figures;  // sorted by name
  const FigureSpec* find(const std::string& name) const;
  std::vector<std::string> figure_names() const;
};

// A run's stable id: a readable prefix (task, pe, the reparam's first 48 characters, l_train,
// seed) and a hash of every setting, so the same run shared by two figures is trained once and
// found again on disk. Short enough for a folder name (255 bytes) whatever the settings.
std::string run_id(const TrainSpec& spec);

}  // namespace lenlab
