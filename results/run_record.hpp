#pragma once
// A finished run read back from its folder (see lab/run_train.hpp for what a folder holds).
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
// representation.csv (train/representation_stats.hpp) into each result's representation, the
// same way (a layer once per length and depth).
void add_representation_csv(const std::string& text, const std::string& where,
                            std::vector<LengthResult>& results);

PositionBiasValues parse_position_bias_csv(const std::string& text, const std::string& where);

// The run in `dir`; nullopt when there is no manifest. A manifest or results file that cannot be
// parsed is a UsageError naming the file. with_results = false reads the manifest only.
std::optional<RunRecord> load_run(const std::filesystem::path& dir, bool with_results = true);
// dir/results.csv (UsageError naming the file if missing or malformed).
std::vector<LengthResult> load_results(const std::filesystem::path& dir);

// results.csv: one row per test length (token tasks: per length and depth), and its reader
// (UsageError naming `where` on any malformed row). The two directions live together so the
// format cannot drift. A scalar task's columns:
//   length,mse,mean_prediction,mean_target,mse_reparam,n_sequences,exact,n_clamped,n_nonfinite
// a token task's (depth empty unless a passkey cell at a fixed depth; excess_ce nan unless markov):
//   length,depth,token_accuracy,exact_match,cross_entropy,excess_ce,n_sequences,n_answer_tokens
std::string results_csv_text(const std::vector<LengthResult>& rows);
std::vector<LengthResult> parse_results_csv(const std::string& text, const std::string& where);

// positions.csv (markov): one row per position of one length's result:
//   length,position,cross_entropy,entropy,excess_ce,token_accuracy
std::string positions_csv_text(const LengthResult& result);
std::vector<PositionResult> parse_positions_csv(const std::string& text, const std::string& where);

// attention.csv (train/attention_stats.hpp's attention_csv_text) into the results it belongs to:
// each row's statistics into the LengthResult of its length and depth (UsageError naming `where`
// on a malformed row, a length results.csv lacks, or a length missing a layer or head).
void add_attention_csv(const std::string& text, const std::string& where,
                       std::vector<LengthResult>& results);

// attention_distance.csv (train/attention_probe.hpp) into each result's logits.by_distance, the
// same way (its logit_var stays NaN: attention.csv's logit_std has it).
void add_attention_distance_csv(const std::string& text, const std::string& where,
                                std::vector<LengthResult>& results);

}  // namespace lenlab
