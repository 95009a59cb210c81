#pragma once
// eval.json, an evaluation's record (`lenlab eval`; lab/run/eval_run.cpp writes it last, after
// the files it lists): what was evaluated (the source run's folder, id and config), how (lengths,
// samples, seed, the test-time attention and the temperatures searched, the representation
// probe's settings), where and how long. Read back here for the representation report
// (report/representation_report.cpp).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tasks/batch.hpp"
#include "train/inference_attention.hpp"
#include "train/inference_eval.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

struct EvalRecord {
  std::string command_line;
  std::filesystem::path source_dir;
  std::string source_id;
  TrainSpec source;          // the run as it was trained
  std::vector<int> lengths;  // the lengths evaluated
  int eval_samples = 0;
  uint64_t eval_seed = 0;
  TestTimeAttention attention;                    // the flags (plain(): none)
  AttentionSpec applied;                          // what they came to for this run
  TemperatureChoice temperatures;                 // an auto temperature's search; else empty
  std::optional<int> representation_projections;  // with --representation-stats
  int threads = 1;
  std::string device;
  double eval_seconds = 0, wall_seconds = 0;
  std::vector<std::string> files;
};

// eval.json's text.
std::string eval_json_text(const EvalRecord& r);

// eval.json's "attention" (and stream.json's): the window applied, then every test-time flag
// given that differs from its default (measurements left out).
nlohmann::ordered_json attention_json(const TestTimeAttention& given, const AttentionSpec& applied);

// What the representation report reads back of an eval.json.
struct EvalSource {
  std::string run_id;                           // the source run's id
  nlohmann::json config;                        // its config, as the run's manifest writes it
  std::optional<int> representation_reference;  // the reference length of the probe, if run
};

// dir/eval.json; UsageError naming the file when it is missing, not JSON, or lacks the source.
EvalSource load_eval_source(const std::filesystem::path& dir);

}  // namespace lenlab
