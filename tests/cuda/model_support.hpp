#pragma once
// What the CUDA model tests share: configs for every encoding, fresh folders, loss curves
// read back and compared (tests/cuda/test_cuda_model.cpp, test_cuda_training.cpp).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include "core/rng.hpp"
#include "core/text_file.hpp"
#include "lab/run/device.hpp"
#include "lab/run/run_group.hpp"
#include "lab/run/run_train.hpp"
#include "models/checkpoint.hpp"
#include "models/cpu/backend.hpp"
#include "models/cuda/backend.hpp"
#include "models/model.hpp"
#include "results/loss_file.hpp"
#include "results/run_record.hpp"
#include "tasks/task.hpp"
#include "tests/cuda/parity.hpp"
#include "tests/support/test_paths.hpp"
#include "train/evaluate.hpp"
#include "train/trainer.hpp"

namespace lenlab::test {

namespace fs = std::filesystem;

inline fs::path fresh(const std::string& name) {
  const fs::path dir = fs::path(LENLAB_TEST_TMP) / "cuda" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline ModelConfig config_for(PositionalEncoding pe) {
  ModelConfig c;
  c.pe = pe;
  c.max_positions = pe == PositionalEncoding::kLearned ? 40 : 0;
  // The test's sequences (up to 25 tokens) reach t5's log-spaced buckets and pass its
  // max_distance, and pass FIRE's threshold.
  c.t5_buckets = 8;
  c.t5_max_distance = 12;
  c.fire_width = 8;
  c.fire_threshold = 6.0;
  if (pe == PositionalEncoding::kBias) c.pe_bias = "-(h+1)/4*log(1+d)";
  return c;
}

// Per-tensor comparison of a model's parameter gradients: tolerance relative to the tensor's
// largest entry, since sums of many float products are compared (cuBLAS and Eigen add in other
// orders).
inline void expect_grads_close(const std::string& what, const ModelConfig& c,
                               const std::vector<float>& gpu, const std::vector<float>& cpu) {
  for (const TensorInfo& t : parameter_layout(c)) {
    const std::vector<float> g(gpu.begin() + t.offset, gpu.begin() + t.offset + t.size);
    const std::vector<float> r(cpu.begin() + t.offset, cpu.begin() + t.offset + t.size);
    float scale = 0;
    for (float x : r) scale = std::max(scale, std::abs(x));
    expect_close(what + " d" + t.name, g, r, 1e-7 + 2e-4 * scale, 1e-3);
  }
}

inline std::vector<StepLog> read_loss_csv(const fs::path& dir) {
  return parse_loss_csv(read_text_file(dir / "loss.csv"), (dir / "loss.csv").string());
}

inline nlohmann::json read_manifest(const fs::path& dir) {
  return nlohmann::json::parse(read_text_file(dir / "manifest.json"));
}

// How closely loss curve `a` follows `b`. Two runs that differ only in float rounding start equal
// and drift apart as training amplifies the rounding (a chaotic map), so: the relative gap over
// the first steps, where it must be tiny, and the relative gap of 10-step window means over the
// whole run, where it must stay a small fraction.
struct CurveGap {
  double first = 0;    // max |a − b| / |b| over steps 1..5
  double windows = 0;  // max over 10-step windows of |mean a − mean b| / mean b
};

// |mean a − mean b| / mean b over each 10-step window, in order.
inline std::vector<double> window_gaps(const std::vector<StepLog>& a,
                                       const std::vector<StepLog>& b) {
  std::vector<double> gaps;
  for (size_t w = 0; w + 10 <= std::min(a.size(), b.size()); w += 10) {
    double ma = 0, mb = 0;
    for (size_t i = w; i < w + 10; ++i) {
      ma += a[i].loss;
      mb += b[i].loss;
    }
    gaps.push_back(std::abs(ma - mb) / mb);
  }
  return gaps;
}

inline CurveGap curve_gap(const std::vector<StepLog>& a, const std::vector<StepLog>& b) {
  REQUIRE(a.size() == b.size());
  REQUIRE(a.size() >= 10);
  CurveGap gap;
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].step == b[i].step);
    CHECK(a[i].lr == doctest::Approx(b[i].lr).epsilon(1e-6));
    if (i < 5)
      gap.first = std::max(gap.first, std::abs(a[i].loss - b[i].loss) / std::abs(b[i].loss));
  }
  for (double g : window_gaps(a, b)) gap.windows = std::max(gap.windows, g);
  return gap;
}

// The same spec trained on the CPU and on the GPU, into dir/<name>-cpu and dir/<name>-gpu; returns
// the two folders.
inline std::pair<fs::path, fs::path> train_on_both(const TrainSpec& spec, const fs::path& dir,
                                                   const std::string& name) {
  RunOptions cpu_run, gpu_run;
  cpu_run.out = dir / (name + "-cpu");
  cpu_run.device = "cpu";
  gpu_run.out = dir / (name + "-gpu");
  gpu_run.device = "cuda";
  REQUIRE(run_train(spec, cpu_run) == kExitOk);
  REQUIRE(run_train(spec, gpu_run) == kExitOk);
  return {cpu_run.out, gpu_run.out};
}

// The CPU's evaluation of the weights a run in `dir` trained (on the GPU), with its settings.
inline std::vector<LengthResult> cpu_evaluation_of(const TrainSpec& spec, const fs::path& dir) {
  const ResolvedSpec resolved = resolve(spec);
  Transformer<float> trained(resolved.model);
  load_checkpoint(dir / "model.safetensors", resolved.model, trained.params());
  return evaluate(trained, {eval_job(resolved, spec)})[0];
}

}  // namespace lenlab::test
