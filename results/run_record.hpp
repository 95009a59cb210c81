#pragma once
// A finished run read back from its folder (see lab/run/run_train.hpp for what a folder holds).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/position_bias_file.hpp"
#include "train/evaluate.hpp"
#include "train/inference_eval.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

struct RunRecord {
  std::string id;  // the folder's name
  TrainSpec spec;
  std::string status;  // "running", "completed" or "diverged"
  double final_train_loss = 0;
  double wall_seconds = 0;
  double train_seconds = 0;
  double eval_seconds = 0;
  // text: the hash of the corpus it was trained on (manifest "corpus"; TextCorpus::hash), else "".
  std::string corpus_hash;
  // How many models trained together with it on a GPU (manifest "models_trained_together"; 1 on
  // the CPU): its seconds are the group's.
  int models_trained_together = 1;
  // --validate: the trained model's in-range score on validation sequences (manifest "validation";
  // train/until_fit.hpp), what a config's [select] chooses by; nullopt: not measured (or NaN).
  std::optional<double> validation;
  // --until-fit (manifest "until_fit"): why the run stopped ("fit", "stalled", or "steps" when it
  // ran every step) and the steps it trained; "" and 0 for a run without the rule.
  std::string stop_reason;
  int steps_trained = 0;
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
  // The rest of the search (manifest "temperature_search"; train/inference_eval.hpp): where the
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

// The run in `dir`; nullopt when there is no manifest. A manifest or results file that cannot be
// parsed is a UsageError naming the file. with_results = false reads the manifest only.
std::optional<RunRecord> load_run(const std::filesystem::path& dir, bool with_results = true);
// Whether `dir` holds a run that trains no more (completed or diverged): what a sweep skips.
bool run_is_finished(const std::filesystem::path& dir);
// dir/results.csv (UsageError naming the file if missing or malformed).
std::vector<LengthResult> load_results(const std::filesystem::path& dir);

}  // namespace lenlab
