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
#include "tests/cuda/model_support.hpp"
#include "tests/cuda/parity.hpp"
#include "tests/support/decode_parity.hpp"
#include "tests/support/test_paths.hpp"
#include "train/evaluate.hpp"
#include "train/trainer.hpp"

namespace lenlab::test {

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
  for (const PositionalEncodingInfo& info : positional_encodings())  // every row of the table
    for (const Option& o : options) {
      const PositionalEncoding pe = info.pe;
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

TEST_CASE("decoding from the cache on the GPU gives the full forward's logits") {
  // tests/support/decode_parity.hpp's table of settings, as tests/models/test_decode.cpp runs it
  // on the CPU; the GPU's full forward is checked against the CPU's above.
  for (const PositionalEncodingInfo& info : positional_encodings())
    for (const DecodeSetting& setting : decode_settings()) {
      CAPTURE(positional_encoding_name(info.pe) + ", " + setting.name);
      ModelConfig c = small_config(info.pe);
      c.token_head = true;
      c.vocab_size = 6;
      Model<CudaBackend> gpu(c);
      gpu.init(11);
      check_decode_parity(gpu, setting.attention, 1e-5);
    }
}

}  // namespace lenlab::test
