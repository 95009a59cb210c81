// Every CUDA operation, forward and backward, against its CPU twin (models/cpu) on random inputs,
// for K = 3 models at once: each model has its own parameters (at a parameter stride that is not
// the tensor's size), its own batch, and the packed layout pads the shorter ones. Each model's
// slice must equal the CPU operation on that model alone; padding rows must stay 0 where ops.hpp
// says so; every backward must add into gradients that already hold values.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "models/cpu/attention.hpp"
#include "models/cpu/embedding.hpp"
#include "models/cpu/gelu.hpp"
#include "models/cpu/layernorm.hpp"
#include "models/cpu/linear.hpp"
#include "models/cpu/rope.hpp"
#include "models/cuda/ops.hpp"
#include "models/cuda/transformer_batch.hpp"
#include "models/loss.hpp"
#include "models/optimizer.hpp"
#include "tasks/task.hpp"
#include "tests/cuda/parity.hpp"

namespace lenlab::test {

namespace {

constexpr int K = 3;

// Three models' batches of different sizes (the last with fewer sequences), packed for the device.
struct PackedBatches {
  std::vector<Batch> batches;
  cuda::DeviceBatches dev;
  int N = 0, S = 0;
  explicit PackedBatches(int n_head, int long_len = 40) {
    Rng rng(17);
    batches = {sample_train_batch(TaskKind::kSum, 5, 6, rng),
               sample_train_batch(TaskKind::kSum, long_len, 6, rng),
               sample_train_batch(TaskKind::kSum, 12, 3, rng)};
    // One length-1 sequence (3 tokens) is certain in the first batch's range; add an explicit one.
    Batch& b = batches[2];
    for (int t : {kBos, kOne, kEos}) b.tokens.push_back(t);
    b.offsets.push_back(b.n_tokens());
    b.targets.push_back(1);
    std::vector<const Batch*> ptrs;
    for (const Batch& x : batches) ptrs.push_back(&x);
    dev.upload(ptrs, n_head);
    N = dev.rows;
    S = dev.seq_slots;
  }
  int rows(int k) const { return batches[k].n_tokens(); }
};

// [K, N, C] random activations; rows past each model's tokens are `pad` (0 by default).
std::vector<float> activations(const PackedBatches& pb, int C, uint32_t seed, bool pad_random) {
  std::vector<float> v = random_floats(static_cast<size_t>(K) * pb.N * C, seed);
  if (!pad_random)
    for (int k = 0; k < K; ++k)
      for (size_t i = static_cast<size_t>(pb.rows(k)) * C; i < static_cast<size_t>(pb.N) * C; ++i)
        v[static_cast<size_t>(k) * pb.N * C + i] = 0;
  return v;
}

std::vector<float> slice(const std::vector<float>& v, size_t begin, size_t n) {
  return std::vector<float>(v.begin() + begin, v.begin() + begin + n);
}

void expect_padding_zero(const std::string& what, const std::vector<float>& v,
                         const PackedBatches& pb, int C) {
  for (int k = 0; k < K; ++k) {
    size_t nonzero = 0;
    for (size_t i = static_cast<size_t>(pb.rows(k)) * C; i < static_cast<size_t>(pb.N) * C; ++i)
      nonzero += v[static_cast<size_t>(k) * pb.N * C + i] != 0.0f;
    CHECK_MESSAGE(nonzero == 0,
                  what << ": model " << k << " has " << nonzero << " non-zero padding entries");
  }
}

// Per-model parameters: K blocks of `stride` floats, random.
std::vector<float> params(size_t stride, uint32_t seed) {
  return random_floats(K * stride, seed, 0.5f);
}

}  // namespace

TEST_CASE("ops: linear forward and backward, K models with their own weights") {
  for (const auto& [C, OC] : {std::pair{64, 192}, std::pair{7, 1}, std::pair{256, 64}}) {
    const PackedBatches pb(4);
    const size_t P = static_cast<size_t>(C) * OC + OC + 5;  // w then b, then unused
    const std::vector<float> w = params(P, 1), x = activations(pb, C, 2, true);
    const std::vector<float> dy = activations(pb, OC, 3, true);
    const std::vector<float> dx0 = random_floats(x.size(), 4), dw0 = params(P, 5);
    cuda::DeviceBuffer<float> w_d(w), x_d(x), dy_d(dy), y_d(static_cast<size_t>(K) * pb.N * OC),
        dx_d(dx0), dw_d(dw0);
    const cuda::Models m{K, P};
    cuda::linear_forward(y_d.data(), x_d.data(), w_d.data(), w_d.data() + C * OC, pb.N, C, OC, m);
    cuda::linear_backward(dx_d.data(), dw_d.data(), dw_d.data() + C * OC, dy_d.data(), x_d.data(),
                          w_d.data(), pb.N, C, OC, m);
    const std::vector<float> y = y_d.download(), dx = dx_d.download(), dw = dw_d.download();
    for (int k = 0; k < K; ++k) {
      const size_t xo = static_cast<size_t>(k) * pb.N * C, yo = static_cast<size_t>(k) * pb.N * OC;
      std::vector<float> ry(static_cast<size_t>(pb.N) * OC), rdx = slice(dx0, xo, pb.N * C),
                                                             rdw = slice(dw0, k * P, P);
      cpu::linear_forward(ry.data(), x.data() + xo, w.data() + k * P, w.data() + k * P + C * OC,
                          pb.N, C, OC);
      cpu::linear_backward(rdx.data(), rdw.data(), rdw.data() + C * OC, dy.data() + yo,
                           x.data() + xo, w.data() + k * P, pb.N, C, OC);
      const std::string tag = fmt::format("linear {}x{} model {}", C, OC, k);
      const double tol = 1e-5 * std::sqrt(static_cast<double>(std::max(C, pb.N)));
      expect_close(tag + " out", slice(y, yo, pb.N * OC), ry, tol);
      expect_close(tag + " dinp (+=)", slice(dx, xo, pb.N * C), rdx, tol);
      expect_close(tag + " dw, db (+=)", slice(dw, k * P, P), rdw, 4 * tol);
    }
  }
}

TEST_CASE("ops: layer norm and GELU forward and backward, residual add") {
  const PackedBatches pb(4);
  const int C = 64;
  const size_t P = 2 * C + 3;  // gain, bias
  std::vector<float> gb = params(P, 6);
  const std::vector<float> x = activations(pb, C, 7, true), dy = activations(pb, C, 8, true);
  const std::vector<float> dx0 = random_floats(x.size(), 9), dgb0 = params(P, 10);
  const size_t KN = static_cast<size_t>(K) * pb.N;
  cuda::DeviceBuffer<float> gb_d(gb), x_d(x), dy_d(dy), y_d(KN * C), mean_d(KN), rstd_d(KN),
      dx_d(dx0), dgb_d(dgb0);
  const cuda::Models m{K, P};
  cuda::layernorm_forward(y_d.data(), mean_d.data(), rstd_d.data(), x_d.data(), gb_d.data(),
                          gb_d.data() + C, pb.N, C, m);
  cuda::layernorm_backward(dx_d.data(), dgb_d.data(), dgb_d.data() + C, dy_d.data(), x_d.data(),
                           gb_d.data(), mean_d.data(), rstd_d.data(), pb.N, C, m);
  const std::vector<float> y = y_d.download(), dx = dx_d.download(), dgb = dgb_d.download();
  const std::vector<float> mean = mean_d.download(), rstd = rstd_d.download();
  for (int k = 0; k < K; ++k) {
    const size_t xo = static_cast<size_t>(k) * pb.N * C;
    std::vector<float> ry(static_cast<size_t>(pb.N) * C), rm(pb.N), rr(pb.N);
    std::vector<float> rdx = slice(dx0, xo, pb.N * C), rdgb = slice(dgb0, k * P, P);
    const float* g = gb.data() + k * P;
    cpu::layernorm_forward(ry.data(), rm.data(), rr.data(), x.data() + xo, g, g + C, pb.N, C);
    cpu::layernorm_backward(rdx.data(), rdgb.data(), rdgb.data() + C, dy.data() + xo, x.data() + xo,
                            g, rm.data(), rr.data(), pb.N, C);
    const std::string tag = fmt::format("layernorm model {}", k);
    expect_close(tag + " out", slice(y, xo, pb.N * C), ry, 1e-5);
    expect_close(tag + " mean", slice(mean, k * pb.N, pb.N), rm, 1e-6);
    expect_close(tag + " rstd", slice(rstd, k * pb.N, pb.N), rr, 1e-6);
    expect_close(tag + " dinp (+=)", slice(dx, xo, pb.N * C), rdx, 1e-5);
    expect_close(tag + " dg, db (+=)", slice(dgb, k * P, P), rdgb, 1e-4);
  }

  // GELU over every entry; residual add.
  std::vector<float> big = random_floats(x.size(), 11, 3.0f);
  cuda::DeviceBuffer<float> in_d(big), out_d(big.size()), th_d(big.size()), dg_d(dx0);
  cuda::gelu_forward(out_d.data(), th_d.data(), in_d.data(), big.size());
  cuda::gelu_backward(dg_d.data(), in_d.data(), th_d.data(), dy_d.data(), big.size());
  std::vector<float> rout(big.size()), rth(big.size()), rdg = dx0;
  cpu::gelu_forward(rout.data(), rth.data(), big.data(), big.size());
  cpu::gelu_backward(rdg.data(), big.data(), rth.data(), dy.data(), big.size());
  expect_close("gelu out", out_d.download(), rout, 1e-6);
  expect_close("gelu tanh", th_d.download(), rth, 1e-6);
  expect_close("gelu dinp (+=)", dg_d.download(), rdg, 1e-5);
  cuda::add_inplace(in_d.data(), dy_d.data(), big.size());
  std::vector<float> rsum = big;
  for (size_t i = 0; i < big.size(); ++i) rsum[i] += dy[i];
  expect_close("add_inplace", in_d.download(), rsum, 0.0, 0.0);
}

TEST_CASE("ops: embedding (with a learned table) and the EOS gather") {
  const PackedBatches pb(4);
  const int d = 16, positions = 45;
  const size_t P = static_cast<size_t>(kVocabSize + positions) * d + 1;  // wte, wpe
  const std::vector<float> w = params(P, 12), dy = activations(pb, d, 13, false);
  const std::vector<float> dw0 = params(P, 14);
  const size_t Nd = static_cast<size_t>(K) * pb.N * d, Sd = static_cast<size_t>(K) * pb.S * d;
  cuda::DeviceBuffer<float> w_d(w), dy_d(dy), y_d(Nd), dw_d(dw0), last_d(Sd),
      dlast_d(random_floats(Sd, 15)), dx_d(Nd);
  const std::vector<float> dlast = dlast_d.download();
  dx_d.zero();
  const cuda::Models m{K, P};
  const cuda::SeqLayout lay{pb.N, 0};
  const int* off = pb.dev.offsets.data();
  const float* wpe = w_d.data() + kVocabSize * d;
  cuda::embedding_forward(y_d.data(), pb.dev.tokens.data(), off, pb.S, w_d.data(), wpe, d, lay, m);
  cuda::embedding_backward(dw_d.data(), dw_d.data() + kVocabSize * d, dy_d.data(),
                           pb.dev.tokens.data(), off, pb.S, d, lay, m);
  cuda::gather_last_forward(last_d.data(), y_d.data(), off, pb.S, d, lay, m);
  cuda::gather_last_backward(dx_d.data(), dlast_d.data(), off, pb.S, d, lay, m);
  const std::vector<float> y = y_d.download(), dw = dw_d.download(), last = last_d.download(),
                           dx = dx_d.download();
  expect_padding_zero("embedding out", y, pb, d);
  expect_padding_zero("gather_last dinp", dx, pb, d);
  for (int k = 0; k < K; ++k) {
    const Batch& b = pb.batches[k];
    const int n = b.n_seq(), rows = pb.rows(k);
    const size_t xo = static_cast<size_t>(k) * pb.N * d, so = static_cast<size_t>(k) * pb.S * d;
    std::vector<float> ry(static_cast<size_t>(rows) * d), rdw = slice(dw0, k * P, P);
    const float* wk = w.data() + k * P;
    cpu::embedding_forward(ry.data(), b.tokens.data(), b.offsets.data(), n, wk, wk + kVocabSize * d,
                           d);
    cpu::embedding_backward(rdw.data(), rdw.data() + kVocabSize * d, dy.data() + xo,
                            b.tokens.data(), b.offsets.data(), n, d);
    std::vector<float> rlast(static_cast<size_t>(n) * d), rdx(static_cast<size_t>(rows) * d, 0.0f);
    cpu::gather_last_forward(rlast.data(), ry.data(), b.offsets.data(), n, d);
    cpu::gather_last_backward(rdx.data(), dlast.data() + so, b.offsets.data(), n, d);
    const std::string tag = fmt::format("model {}", k);
    expect_close("embedding out " + tag, slice(y, xo, rows * d), ry, 0.0, 0.0);
    expect_close("embedding dwte, dwpe (+=) " + tag, slice(dw, k * P, P), rdw, 1e-5);
    expect_close("gather_last out " + tag, slice(last, so, n * d), rlast, 0.0, 0.0);
    // empty sequence slots gather zeros
    for (size_t i = so + static_cast<size_t>(n) * d; i < so + static_cast<size_t>(pb.S) * d; ++i)
      CHECK(last[i] == 0.0f);
    expect_close("gather_last dinp (+=) " + tag, slice(dx, xo, rows * d), rdx, 0.0, 0.0);
  }
}

TEST_CASE("ops: RoPE forward and backward") {
  const int d = 64, H = 4;
  const PackedBatches pb(H);
  cpu::RopeTable<float> table;
  table.ensure(pb.dev.max_seq_len, d / H, 10000.0);
  cuda::DeviceBuffer<float> cos_d(table.cos), sin_d(table.sin);
  const std::vector<float> x = activations(pb, 3 * d, 16, false);
  const std::vector<float> dy = activations(pb, 3 * d, 17, false);
  const std::vector<float> dx0 = activations(pb, 3 * d, 18, false);
  cuda::DeviceBuffer<float> x_d(x), dy_d(dy), y_d(x.size()), dx_d(dx0);
  const cuda::SeqLayout lay{pb.N, 0};
  const cuda::Models m{K, 0};
  cuda::rope_forward(y_d.data(), x_d.data(), pb.dev.offsets.data(), pb.S, d, H, cos_d.data(),
                     sin_d.data(), lay, m);
  cuda::rope_backward(dx_d.data(), dy_d.data(), pb.dev.offsets.data(), pb.S, d, H, cos_d.data(),
                      sin_d.data(), lay, m);
  const std::vector<float> y = y_d.download(), dx = dx_d.download();
  expect_padding_zero("rope out", y, pb, 3 * d);
  expect_padding_zero("rope dinp", dx, pb, 3 * d);
  for (int k = 0; k < K; ++k) {
    const Batch& b = pb.batches[k];
    const size_t o = static_cast<size_t>(k) * pb.N * 3 * d,
                 n = static_cast<size_t>(pb.rows(k)) * 3 * d;
    std::vector<float> ry(n), rdx = slice(dx0, o, n);
    cpu::rope_forward(ry.data(), x.data() + o, b.offsets.data(), b.n_seq(), d, H, table);
    cpu::rope_backward(rdx.data(), dy.data() + o, b.offsets.data(), b.n_seq(), d, H, table);
    expect_close(fmt::format("rope out model {}", k), slice(y, o, n), ry, 1e-6);
    expect_close(fmt::format("rope dinp (+=) model {}", k), slice(dx, o, n), rdx, 1e-6);
  }
}

TEST_CASE("ops: causal attention forward and backward (NoPE, ALiBi, temperature, odd hd)") {
  struct Case {
    int d, H;
    bool alibi;
    float logit_scale;
  };
  for (const Case& c : {Case{64, 4, false, 1.0f}, Case{64, 4, true, 1.0f}, Case{12, 4, false, 0.7f},
                        Case{40, 2, true, 1.3f}}) {
    const std::string name =
        fmt::format("attention d={} H={} alibi={} scale={}", c.d, c.H, c.alibi, c.logit_scale);
    CAPTURE(name);
    const PackedBatches pb(c.H, 60);
    const int d = c.d, H = c.H;
    const std::vector<float> qkv = activations(pb, 3 * d, 19, false);
    const std::vector<float> dy = activations(pb, d, 20, false);
    const std::vector<float> dqkv0 = activations(pb, 3 * d, 21, false);
    std::vector<float> slopes;
    for (double s : cpu::alibi_slopes(H)) slopes.push_back(static_cast<float>(s));
    cuda::DeviceBuffer<float> qkv_d(qkv), dy_d(dy), y_d(dy.size()), dqkv_d(dqkv0), slopes_d(slopes);
    cuda::DeviceBuffer<float> att_d(K * pb.dev.att_stride), scratch_d(K * pb.dev.att_stride);
    cuda::AttentionOptions opt;
    opt.alibi_slopes = c.alibi ? slopes_d.data() : nullptr;
    opt.logit_scale = c.logit_scale;
    const cuda::SeqLayout lay{pb.N, pb.dev.att_stride};
    const cuda::Models m{K, 0};
    cuda::attention_forward(y_d.data(), att_d.data(), qkv_d.data(), pb.dev.offsets.data(),
                            pb.dev.att_offsets.data(), pb.S, d, H, opt, lay, m);
    cuda::attention_backward(dqkv_d.data(), dy_d.data(), qkv_d.data(), att_d.data(),
                             pb.dev.offsets.data(), pb.dev.att_offsets.data(), pb.S, d, H, opt,
                             scratch_d.data(), lay, m);
    const std::vector<float> y = y_d.download(), att = att_d.download(), dqkv = dqkv_d.download();
    expect_padding_zero(name + " out", y, pb, d);
    expect_padding_zero(name + " dqkv", dqkv, pb, 3 * d);
    cpu::AttentionOptions<float> copt;
    copt.alibi_slopes = c.alibi ? slopes.data() : nullptr;
    copt.logit_scale = c.logit_scale;
    for (int k = 0; k < K; ++k) {
      const Batch& b = pb.batches[k];
      const int rows = pb.rows(k);
      const std::vector<size_t> aoff = cpu::attention_offsets(b.offsets.data(), b.n_seq(), H);
      const size_t o3 = static_cast<size_t>(k) * pb.N * 3 * d,
                   o1 = static_cast<size_t>(k) * pb.N * d;
      std::vector<float> ry(static_cast<size_t>(rows) * d), ratt(aoff.back());
      std::vector<float> rdqkv = slice(dqkv0, o3, static_cast<size_t>(rows) * 3 * d);
      cpu::attention_forward(ry.data(), ratt.data(), qkv.data() + o3, b.offsets.data(), aoff,
                             b.n_seq(), d, H, copt);
      cpu::attention_backward(rdqkv.data(), dy.data() + o1, qkv.data() + o3, ratt.data(),
                              b.offsets.data(), aoff, b.n_seq(), d, H, copt);
      const std::string tag = fmt::format("{} model {}", name, k);
      expect_close(tag + " out", slice(y, o1, rows * d), ry, 2e-6);
      expect_close(tag + " probabilities", slice(att, k * pb.dev.att_stride, aoff.back()), ratt,
                   1e-6);
      expect_close(tag + " dqkv (+=)", slice(dqkv, o3, rows * 3 * d), rdqkv, 2e-5);
    }
  }
}

TEST_CASE("ops: loss, gradient norm and AdamW with clipping, per model") {
  // mse_loss: model 2 has fewer sequences (empty slots), with and without weights.
  const int S = 8;
  const std::vector<int> n_seq = {8, 8, 5};
  const std::vector<float> pred = random_floats(K * S, 22);
  std::vector<double> target(K * S), weights(K * S, 0.0);
  for (int i = 0; i < K * S; ++i) target[i] = 0.3 * i - 2;
  for (int k = 0; k < K; ++k)
    for (int s = 0; s < n_seq[k]; ++s)
      weights[k * S + s] = (s + 1.0) / (n_seq[k] * (n_seq[k] + 1) / 2.0);
  cuda::DeviceBuffer<float> pred_d(pred), dpred_d(K * S);
  cuda::DeviceBuffer<double> target_d(target), weights_d(weights), loss_d(K);
  cuda::DeviceBuffer<int> n_d(n_seq);
  for (bool weighted : {false, true}) {
    cuda::mse_loss(pred_d.data(), target_d.data(), weighted ? weights_d.data() : nullptr,
                   n_d.data(), S, dpred_d.data(), loss_d.data(), K);
    const std::vector<double> loss = loss_d.download(K);
    const std::vector<float> dpred = dpred_d.download();
    for (int k = 0; k < K; ++k) {
      const std::vector<double> t(target.begin() + k * S, target.begin() + k * S + n_seq[k]);
      const std::vector<double> w =
          weighted
              ? std::vector<double>(weights.begin() + k * S, weights.begin() + k * S + n_seq[k])
              : std::vector<double>{};
      std::vector<float> rd(n_seq[k]);
      const double rl = mse_loss(pred.data() + k * S, t, w, rd.data());
      CHECK(loss[k] == doctest::Approx(rl).epsilon(1e-12));
      expect_close(fmt::format("mse dpred model {} weighted={}", k, weighted),
                   slice(dpred, k * S, n_seq[k]), rd, 0.0, 0.0);
      for (int s = n_seq[k]; s < S; ++s) CHECK(dpred[k * S + s] == 0.0f);
    }
  }

  // AdamW after global-norm clipping, 4 steps, against the CPU's clip_grad_norm + AdamW<float>.
  ModelConfig mc;
  mc.n_layer = 1;
  mc.d_model = 16;
  mc.n_head = 2;
  mc.d_ff = 32;
  const size_t P = parameter_count(mc);
  OptimizerConfig oc;
  oc.weight_decay = 0.1;
  oc.clip_norm = 1.0;
  std::vector<float> p = random_floats(K * P, 23);
  cuda::DeviceBuffer<float> p_d(p), g_d(K * P), m1(K * P), m2(K * P);
  m1.zero();
  m2.zero();
  const auto mask = weight_decay_mask<float>(mc);
  cuda::DeviceBuffer<float> mask_d;
  mask_d.upload(mask.data(), P);
  cuda::DeviceBuffer<double> norms_d(K), losses_d(K);
  cuda::DeviceBuffer<cuda::AdamWStep> steps_d(K);
  std::vector<std::vector<float>> ref(K);
  std::vector<std::unique_ptr<AdamW<float>>> cpu_opt;
  for (int k = 0; k < K; ++k) {
    ref[k] = slice(p, k * P, P);
    cpu_opt.push_back(std::make_unique<AdamW<float>>(oc, mc));
  }
  for (int step = 0; step < 4; ++step) {
    // model 0: small gradients (no clipping); model 1: large (clipped); model 2: non-finite on
    // step 2 (left untouched then).
    std::vector<float> g = random_floats(K * P, 30 + step, 1e-4f);
    for (size_t i = P; i < 2 * P; ++i) g[i] *= 1e5f;
    if (step == 2) g[2 * P + 7] = std::numeric_limits<float>::infinity();
    g_d.upload(g);
    std::vector<double> losses(K, 1.0);
    losses_d.upload(losses);
    cuda::grad_norm(g_d.data(), P, norms_d.data(), {K, P});
    const std::vector<double> norms = norms_d.download(K);
    std::vector<cuda::AdamWStep> st(K);
    const double lr = 1e-2;
    for (int k = 0; k < K; ++k) {
      const int t = cpu_opt[k]->steps_taken() + 1;
      st[k] = {static_cast<float>(lr),
               0.9f,
               0.999f,
               1e-8f,
               static_cast<float>(lr * 0.1),
               static_cast<float>(1.0 / (1.0 - std::pow(0.9, t))),
               static_cast<float>(1.0 / (1.0 - std::pow(0.999, t))),
               oc.clip_norm};
    }
    steps_d.upload(st);
    cuda::adamw_step(p_d.data(), g_d.data(), m1.data(), m2.data(), mask_d.data(), steps_d.data(),
                     norms_d.data(), losses_d.data(), P, {K, P});
    for (int k = 0; k < K; ++k) {
      std::vector<float> gk = slice(g, k * P, P);
      double sum = 0;
      for (float x : gk) sum += static_cast<double>(x) * x;
      if (std::isfinite(sum))
        CHECK(norms[k] == doctest::Approx(std::sqrt(sum)).epsilon(1e-9));
      else
        CHECK(std::isinf(norms[k]));
      const double norm = clip_grad_norm(gk.data(), P, oc.clip_norm);
      if (std::isfinite(norm)) cpu_opt[k]->step(ref[k].data(), gk.data(), lr);
    }
  }
  const std::vector<float> got = p_d.download();
  for (int k = 0; k < K; ++k)
    expect_close(fmt::format("adamw params after 4 steps, model {}", k), slice(got, k * P, P),
                 ref[k], 1e-6, 1e-5);
  // model 2 skipped step 2 (as the CPU trainer stops such a run before its step), so it took 3.
  CHECK(cpu_opt[2]->steps_taken() == 3);
}

}  // namespace lenlab::test
