#pragma once
// A finished run read back from its folder (see lab/run/run_train.hpp for what a folder holds).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "train/evaluate.hpp"
#include "train/test_time_eval.hpp"
#include "train/train_spec.hpp"

namespace lenlab {

// A run's positional bias after training (position_bias.csv; models/position_bias.hpp): b by
// layer, head and distance 0..max_distance. Empty for an encoding without one.
struct PositionBiasValues {
  int n_layer = 0, n_head = 0, max_distance = -1;
  std::vector<double> values;  // [n_layer, n_head, max_distance + 1]
  bool empty() const { return values.empty(); }
  double at(int l, int h, int d) const {
    return values[(static_cast<size_t>(l) * n_head + h) * (max_distance + 1) + d];
  }
};

struct RunRecord {
  std::string id;  // the folder's name
  TrainSpec spec;
  std::string status;  // "running", "completed" or "diverged"
  double final_train_loss = 0;
  double wall_seconds = 0;
  double train_seconds = 0;
  double eval_seconds = 0;
  // The long-short misalignment at l_train (manifest "misalignment"; train/misalignment.hpp), for
  // the tasks that have it.
  std::optional<double> misalignment;
  // markov: its parts, the symmetric KL divergence and the two entropies (value = their sum), and
  // the SCE and divergence a perfect model has on the same pairs (manifest "misalignment").
  std::optional<double> misalignment_divergence, misalignment_entropy;
  std::optional<double> misalignment_perfect, misalignment_perfect_divergence;
  // temperature = auto-pmax or auto-entropy: the τ paper 002's search chose per test length past
  // l_train (manifest "temperature_by_length"); else empty.
  std::map<int, double> temperature_by_length;
  // And paper 002's closed forms per length (manifest "temperature_closed_form"; NaN: none).
  std::map<int, double> temperature_pmax_closed_form, temperature_entropy_closed_form;
  // The rest of the search (manifest "temperature_search"; train/test_time_eval.hpp): where the
  // chosen τ sits at the grid's bound ("low"/"high"), the τ each other criterion gives per length
  // ("auto-pmax", "auto-entropy", "log_rule"; NaN: none), and the whole curve: every grid τ at
  // every length past l_train, its metrics by name (attention_max_prob, attention_entropy too).
  std::map<int, std::string> temperature_at_bound;
  std::map<std::string, std::map<int, double>> temperature_chosen;
  std::vector<TemperatureCurvePoint> temperature_curve;
  std::vector<LengthResult> results;  // empty unless completed
  // markov: each position's cross-entropy at the longest test length (positions.csv); else empty
  std::vector<PositionResult> positions;
  PositionBiasValues position_bias;
};

// position_bias.csv's reader (UsageError naming `where` on a malformed or incomplete table).
PositionBiasValues parse_position_bias_csv(const std::string& text, const std::string& where);

// The run in `dir`; nullopt when there is no manifest. A manifest or results file that cannot be
// parsed is a UsageError naming the file. with_results = false reads the manifest only.
std::optional<RunRecord> load_run(const std::filesystem::path& dir, bool with_results = true);
// dir/results.csv (UsageError naming the file if missing or malformed).
std::vector<LengthResult> load_results(const std::filesystem::path& dir);

}  // namespace lenlab
