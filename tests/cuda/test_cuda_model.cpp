// The whole model and the training loop on the GPU against the CPU backend: forward, backward and
// inference for each positional encoding and step-input option with K models at once against each
// model alone on the CPU, 100 training steps against the CPU's loss curve, and a group of runs
// against the same runs trained one by one.
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

namespace {

namespace fs = std::filesystem;

fs::path fresh(const std::string& name) {
  const fs::path dir = fs::path(LENLAB_TEST_TMP) / "cuda" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

ModelConfig config_for(PositionalEncoding pe) {
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
void expect_grads_close(const std::string& what, const ModelConfig& c,
                        const std::vector<float>& gpu, const std::vector<float>& cpu) {
  for (const TensorInfo& t : parameter_layout(c)) {
    const std::vector<float> g(gpu.begin() + t.offset, gpu.begin() + t.offset + t.size);
    const std::vector<float> r(cpu.begin() + t.offset, cpu.begin() + t.offset + t.size);
    float scale = 0;
    for (float x : r) scale = std::max(scale, std::abs(x));
    expect_close(what + " d" + t.name, g, r, 1e-7 + 2e-4 * scale, 1e-3);
  }
}

std::vector<StepLog> read_loss_csv(const fs::path& dir) {
  return parse_loss_csv(read_text_file(dir / "loss.csv"), (dir / "loss.csv").string());
}

nlohmann::json read_manifest(const fs::path& dir) {
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
std::vector<double> window_gaps(const std::vector<StepLog>& a, const std::vector<StepLog>& b) {
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

CurveGap curve_gap(const std::vector<StepLog>& a, const std::vector<StepLog>& b) {
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
std::pair<fs::path, fs::path> train_on_both(const TrainSpec& spec, const fs::path& dir,
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
std::vector<LengthResult> cpu_evaluation_of(const TrainSpec& spec, const fs::path& dir) {
  const ResolvedSpec resolved = resolve(spec);
  Transformer<float> trained(resolved.model);
  load_checkpoint(dir / "model.safetensors", resolved.model, trained.params());
  return evaluate(trained, {eval_job(resolved, spec)})[0];
}

}  // namespace

// Runs model (K models) forward on `batches` and backward with dLoss/dz = 1 at every read row and
// 0 at the padding rows of a model with fewer (as the losses give them), returning the outputs
// [K·R] and each model's gradients.
template <class B>
std::pair<std::vector<float>, std::vector<std::vector<float>>> forward_backward(
    Model<B>& model, const std::vector<const Batch*>& batches, bool infer,
    const std::vector<const AttentionSpec*>& specs = {}) {
  PackedBatch<B> in;
  in.pack(batches, model.config(), specs);
  if (infer) {
    model.infer(in);
    return {model.download_scalar_out(in), {}};
  }
  model.forward(in);
  const std::vector<float> out = model.download_scalar_out(in);
  const size_t R = out.size() / batches.size();
  std::vector<float> ones(out.size(), 0.0f);
  for (size_t k = 0; k < batches.size(); ++k)
    std::fill_n(ones.begin() + k * R, batches[k]->n_read(), 1.0f);
  typename B::template Buffer<float> dz;
  B::upload(dz, ones.data(), ones.size());
  model.zero_grad();
  model.backward(in, dz.data(), nullptr);
  std::vector<std::vector<float>> grads;
  for (int k = 0; k < model.n_models(); ++k) grads.push_back(model.gradients(k));
  return {out, grads};
}

TEST_CASE(
    "the whole model on the GPU: forward, backward and inference match the CPU for each PE "
    "and step-input option, for K models at once") {
  Rng rng(3);
  // Three models' batches: different lengths and counts (padding rows and an empty slot).
  std::vector<Batch> batches(3);
  for (int k = 0; k < 3; ++k) {
    const int n = 4 - k;
    for (int s = 0; s < n; ++s) {
      std::vector<int32_t> tokens = {kBos};
      const int len = 3 + static_cast<int>(rng.uniform_int(0, 20));
      for (int i = 0; i < len; ++i) tokens.push_back(static_cast<int32_t>(rng.uniform_int(0, 1)));
      tokens.push_back(kEos);
      append_sequence(batches[k], tokens, 1.0);
    }
  }
  struct Option {
    const char* name;
    void (*edit)(AttentionSpec&);
  };
  const Option options[] = {
      {"plain", [](AttentionSpec&) {}},
      {"window 2+4 and cap 3",
       [](AttentionSpec& a) {
         a.window = {2, 4, 3};
       }},
      {"temperature by length",
       [](AttentionSpec& a) {
         a.logit_scale_by_length = {1.0, 1.1, 1.2, 1.3};
       }},
  };
  for (PositionalEncoding pe :
       {PositionalEncoding::kNope, PositionalEncoding::kLearned, PositionalEncoding::kAlibi,
        PositionalEncoding::kRope, PositionalEncoding::kT5, PositionalEncoding::kKerple,
        PositionalEncoding::kFire, PositionalEncoding::kBias})
    for (const Option& o : options) {
      const std::string what = positional_encoding_name(pe) + ", " + o.name;
      CAPTURE(what);
      std::vector<const Batch*> ptrs;
      std::vector<AttentionSpec> specs(batches.size());
      std::vector<const AttentionSpec*> spec_ptrs;
      for (size_t k = 0; k < batches.size(); ++k) {
        o.edit(specs[k]);
        ptrs.push_back(&batches[k]);
        spec_ptrs.push_back(&specs[k]);
      }
      const ModelConfig c = config_for(pe);
      Model<CudaBackend> gpu(c, 3);
      for (int k = 0; k < 3; ++k) gpu.init(k, 20 + k);
      const auto [gpu_out, gpu_grads] = forward_backward(gpu, ptrs, false, spec_ptrs);
      const auto gpu_infer = forward_backward(gpu, ptrs, true, spec_ptrs).first;
      const size_t R = gpu_out.size() / 3;
      for (int k = 0; k < 3; ++k) {
        Transformer<float> cpu(c);
        cpu.init(20 + k);
        const auto [cpu_out, cpu_grads] = forward_backward(cpu, {ptrs[k]}, false, {spec_ptrs[k]});
        const std::vector<float> g_out(gpu_out.begin() + k * R,
                                       gpu_out.begin() + k * R + cpu_out.size());
        const std::vector<float> g_inf(gpu_infer.begin() + k * R,
                                       gpu_infer.begin() + k * R + cpu_out.size());
        expect_close(what + fmt::format(" model {} outputs", k), g_out, cpu_out, 1e-5);
        expect_close(what + fmt::format(" model {} inference", k), g_inf, cpu_out, 1e-5);
        expect_grads_close(what + fmt::format(" model {}", k), c, gpu_grads[k], cpu_grads[0]);
      }
    }
}

TEST_CASE("attention outputs read back on the GPU match the CPU's (representation probe)") {
  Rng rng(5);
  std::vector<Batch> batches(3);
  for (int k = 0; k < 3; ++k)
    for (int s = 0; s < 3 - k; ++s) {
      std::vector<int32_t> tokens = {kBos};
      const int len = 2 + static_cast<int>(rng.uniform_int(0, 15));
      for (int i = 0; i < len; ++i) tokens.push_back(static_cast<int32_t>(rng.uniform_int(0, 1)));
      tokens.push_back(kEos);
      append_sequence(batches[k], tokens, 0.5);
    }
  std::vector<const Batch*> ptrs;
  for (const Batch& b : batches) ptrs.push_back(&b);
  for (PositionalEncoding pe :
       {PositionalEncoding::kNope, PositionalEncoding::kRope, PositionalEncoding::kAlibi}) {
    CAPTURE(positional_encoding_name(pe));
    const ModelConfig c = config_for(pe);
    Model<CudaBackend> gpu(c, 3);
    for (int k = 0; k < 3; ++k) gpu.init(k, 40 + k);
    PackedBatch<CudaBackend> in;
    in.pack(ptrs, c);
    gpu.forward(in);
    for (int k = 0; k < 3; ++k) {
      Transformer<float> cpu(c);
      cpu.init(40 + k);
      PackedBatch<CpuBackend<float>> cin;
      cin.pack({ptrs[k]}, c);
      cpu.forward(cin);
      const Batch& b = batches[k];
      for (int l = 0; l < c.n_layer; ++l) {
        const std::vector<float> g = gpu.download_attention_output(in, l);
        const std::vector<float> h = cpu.download_attention_output(cin, l);
        const bool last = l == c.n_layer - 1;
        std::vector<float> gr, hr;
        for (int r = 0; r < b.n_tokens(); ++r) {
          if (last && std::find(b.read_rows.begin(), b.read_rows.end(), r) == b.read_rows.end())
            continue;
          const size_t d = c.d_model;
          gr.insert(gr.end(), g.begin() + (k * in.rows + r) * d,
                    g.begin() + (k * in.rows + r + 1) * d);
          hr.insert(hr.end(), h.begin() + r * d, h.begin() + (r + 1) * d);
        }
        expect_close(fmt::format("model {} layer {}", k, l), gr, hr, 1e-5);
      }
    }
  }
}

TEST_CASE("100 training steps on the GPU track the CPU's loss curve, and its evaluation agrees") {
  const fs::path dir = fresh("curve");
  for (const char* pe : {"nope", "alibi"}) {
    CAPTURE(pe);
    TrainSpec spec;
    spec.task = "sum";
    spec.pe = pe;
    spec.reparam = "sqrt";
    spec.l_train = 8;
    spec.l_test = 14;
    spec.steps = 100;
    spec.optimizer.warmup_steps = 20;
    spec.eval_samples = 64;
    const auto [cpu_out, gpu_out] = train_on_both(spec, dir, pe);
    // How far rounding alone moves this run: the CPU in float64 against the CPU in float32. Some
    // of these runs turn chaotic (NoPE's has a loss spike near step 50 whose size rounding
    // decides: there the CPU's own float32 and float64 10-step means differ by 0.4 to 0.9), and
    // past that point no implementation can track another. So the GPU must track the CPU over
    // the windows where rounding has not yet moved the CPU's curve by more than 5 %.
    TrainSpec exact = spec;
    exact.precision = "float64";
    RunOptions exact_run;
    exact_run.out = dir / (std::string(pe) + "-cpu64");
    exact_run.device = "cpu";
    REQUIRE(run_train(exact, exact_run) == kExitOk);

    const std::vector<StepLog> cpu_log = read_loss_csv(cpu_out);
    const std::vector<StepLog> gpu_log = read_loss_csv(gpu_out);
    const CurveGap gap = curve_gap(gpu_log, cpu_log);
    const std::vector<double> rounding = window_gaps(cpu_log, read_loss_csv(exact_run.out));
    const std::vector<double> tracking = window_gaps(gpu_log, cpu_log);
    size_t windows = 0;
    double worst = 0;
    while (windows < rounding.size() && rounding[windows] <= 0.05)
      worst = std::max(worst, tracking[windows++]);
    std::printf(
        "  %s: loss GPU vs CPU, steps 1..5 within %.2e relative; 10-step means within %.2e over "
        "the first %zu windows, where the CPU's float32 and float64 runs agree within 5 %% (over "
        "all: %.2e; loss %.4g at step 1, %.4g at step 100)\n",
        pe, gap.first, worst, windows, gap.windows, cpu_log.front().loss, cpu_log.back().loss);
    CHECK(gap.first < 1e-5);
    CHECK(windows >= 3);
    CHECK(worst < 0.1);

    // The GPU's evaluation of its trained model against the CPU's evaluation of the same weights.
    const std::vector<LengthResult> cpu_res = cpu_evaluation_of(spec, gpu_out);
    const std::vector<LengthResult> gpu_res = load_results(gpu_out);
    REQUIRE(cpu_res.size() == gpu_res.size());
    double worst_mse = 0;
    for (size_t i = 0; i < cpu_res.size(); ++i) {
      CHECK(cpu_res[i].n_sequences == gpu_res[i].n_sequences);
      CHECK(cpu_res[i].mean_target == doctest::Approx(gpu_res[i].mean_target).epsilon(1e-9));
      worst_mse = std::max(
          worst_mse, std::abs(cpu_res[i].mse - gpu_res[i].mse) / (1e-9 + std::abs(cpu_res[i].mse)));
    }
    std::printf(
        "  %s: test mse of the same weights, GPU vs CPU evaluation, lengths 1..14: "
        "within %.2e relative\n",
        pe, worst_mse);
    CHECK(worst_mse < 1e-3);
  }
}

TEST_CASE(
    "token tasks and the training-side methods on the GPU: the loss curve tracks the CPU's, and "
    "so do their metrics") {
  const fs::path dir = fresh("token-curve");
  struct Row {
    const char* name;
    const char* task;
    void (*edit)(TrainSpec&);
  };
  const Row rows[] = {
      {"copy", "copy", [](TrainSpec&) {}},
      {"passkey", "passkey", [](TrainSpec&) {}},
      {"markov", "markov", [](TrainSpec&) {}},
      {"markov-misalign", "markov", [](TrainSpec& s) { s.misalign.alpha = 0.3; }},
      {"markov-vcl", "markov", [](TrainSpec& s) { s.vcl.offset = 3; }},
      {"markov-vcl-detach", "markov",
       [](TrainSpec& s) {
         s.vcl = {3, 0.0, "detach"};
       }},
      {"markov-vcl-random", "markov",
       [](TrainSpec& s) {
         s.vcl = {3, 0.5, "random"};
       }},
      {"copy-randpos", "copy", [](TrainSpec& s) { s.random_positions = 40; }},
  };
  for (const Row& row : rows) {
    const char* task = row.name;
    CAPTURE(task);
    TrainSpec spec;
    spec.task = row.task;
    spec.pe = "alibi";
    spec.token.n_symbols = 6;
    spec.token.key_length = 2;
    spec.l_train = 6;
    spec.l_test = 9;
    spec.steps = 100;
    spec.optimizer.warmup_steps = 20;
    spec.eval_samples = 64;
    row.edit(spec);
    const auto [cpu_out, gpu_out] = train_on_both(spec, dir, task);
    const CurveGap gap = curve_gap(read_loss_csv(gpu_out), read_loss_csv(cpu_out));
    std::printf(
        "  %s: cross-entropy GPU vs CPU, steps 1..5 within %.2e; 10-step means within %.2e\n", task,
        gap.first, gap.windows);
    CHECK(gap.first < 1e-5);
    CHECK(gap.windows < 0.15);

    // The GPU's evaluation of its weights against the CPU's evaluation of the same weights.
    const std::vector<LengthResult> cpu_res = cpu_evaluation_of(spec, gpu_out);
    const std::vector<LengthResult> gpu_res = load_results(gpu_out);
    REQUIRE(cpu_res.size() == gpu_res.size());
    double worst_ce = 0;
    for (size_t i = 0; i < cpu_res.size(); ++i) {
      CHECK(cpu_res[i].length == gpu_res[i].length);
      CHECK(cpu_res[i].depth == gpu_res[i].depth);
      // An argmax may flip where two logits tie to float rounding: one answer row in 64 at most.
      CHECK(std::abs(cpu_res[i].token_accuracy - gpu_res[i].token_accuracy) <=
            cpu_res[i].n_sequences / (64.0 * cpu_res[i].n_answer_tokens) + 1e-12);
      worst_ce = std::max(worst_ce, std::abs(cpu_res[i].cross_entropy - gpu_res[i].cross_entropy) /
                                        cpu_res[i].cross_entropy);
    }
    std::printf("  %s: test cross-entropy of the same weights, GPU vs CPU: within %.2e relative\n",
                task, worst_ce);
    CHECK(worst_ce < 1e-4);
  }
}

TEST_CASE(
    "a group of runs on the GPU trains each run as it trains alone, and divergence stays local") {
  const fs::path dir = fresh("group");
  std::vector<TrainSpec> specs(4);
  specs[0].task = "length";
  specs[0].l_train = 6;
  specs[1].task = "sum";
  specs[1].reparam = "sqrt";
  specs[1].seed = 2;
  specs[2].task = "mean-uniform";
  specs[2].l_train = 12;
  specs[2].optimizer.lr = 5e-4;
  specs[2].seed = 3;
  specs[3].task = "length";  // diverges: a huge learning rate, no clipping
  specs[3].optimizer.lr = 1e30;
  specs[3].optimizer.clip_norm = 0;
  std::vector<GroupJob> group;
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].steps = 60;
    specs[i].optimizer.warmup_steps = 10;
    specs[i].l_test = 16;
    specs[i].eval_samples = 32;
    GroupJob j{specs[i], {}};
    j.options.out = dir / fmt::format("together-{}", i);
    group.push_back(j);
  }
  const std::vector<int> codes = Device::choose("cuda").train(group);
  REQUIRE(codes.size() == specs.size());
  CHECK(codes[3] == kExitDiverged);
  CHECK(read_manifest(group[3].options.out)["status"] == "diverged");
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(codes[i] == kExitOk);
    GroupJob alone = group[i];
    alone.options.out = dir / fmt::format("alone-{}", i);
    REQUIRE(Device::choose("cuda").train({alone}) == std::vector<int>{kExitOk});
    CHECK(read_manifest(group[i].options.out)["models_trained_together"] == 4);
    // Together, a model's batch is padded to the group's largest, so cuBLAS sees other sizes
    // and may add in another order: equal up to rounding, amplified by training.
    const CurveGap gap =
        curve_gap(read_loss_csv(group[i].options.out), read_loss_csv(alone.options.out));
    std::printf(
        "  run %d (%s): loss together vs alone, steps 1..5 within %.2e relative; 10-step "
        "means within %.2e\n",
        i, specs[i].task.c_str(), gap.first, gap.windows);
    CHECK(gap.first < 1e-5);
    CHECK(gap.windows < 0.05);
    const std::vector<LengthResult> a = load_results(group[i].options.out);
    const std::vector<LengthResult> b = load_results(alone.options.out);
    REQUIRE(a.size() == b.size());
    double worst_mse = 0;
    for (size_t l = 0; l < a.size(); ++l)
      worst_mse = std::max(worst_mse, std::abs(a[l].mse - b[l].mse) / std::abs(b[l].mse));
    std::printf("  run %d: test mse together vs alone within %.2e relative\n", i, worst_mse);
    CHECK(worst_mse < 0.2);
  }
}

}  // namespace lenlab::test
