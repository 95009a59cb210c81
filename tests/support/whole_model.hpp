#pragma once
// The whole model on the CPU in double, for the gradient checks (test_transformer.cpp) and the
// model's properties (test_model_properties.cpp): bit-string batches, the total loss and its
// gradients, a perturbed start, the scalar outputs through either forward.
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "models/positional_encodings.hpp"
#include "tasks/batch.hpp"

namespace lenlab::test {

using DModel = Model<CpuBackend<double>>;
using DPacked = PackedBatch<CpuBackend<double>>;

// [BOS, bits..., EOS] for each bit string, packed; the scalar head reads each EOS.
inline Batch make_batch(const std::vector<std::vector<int>>& seqs) {
  Batch b;
  for (const auto& bits : seqs) {
    std::vector<int32_t> tokens = {kBos};
    for (int x : bits) tokens.push_back(x);
    tokens.push_back(kEos);
    append_sequence(b, tokens, static_cast<double>(bits.size()) * 0.3);
  }
  return b;
}

// The token head reads every row, predicting the next token (the last row predicts EOS), with
// weights that differ per row; the scalar head keeps its EOS rows.
inline Batch with_token_readout(Batch b) {
  for (int s = 0; s < b.n_seq(); ++s)
    for (int t = b.offsets[s]; t < b.offsets[s + 1]; ++t) {
      b.token.rows.push_back(t);
      b.token.labels.push_back(t + 1 < b.offsets[s + 1] ? b.tokens[t + 1] : kEos);
      b.token.weights.push_back(0.1 + 0.05 * (t % 3));
    }
  return b;
}

// Every row of the table of encodings (models/positional_encodings.hpp), so that a new encoding
// enters every whole-model test by its row alone.
inline std::vector<PositionalEncoding> encodings_where(
    bool (*keep)(const PositionalEncodingInfo&)) {
  std::vector<PositionalEncoding> out;
  for (const PositionalEncodingInfo& info : positional_encodings())
    if (keep(info)) out.push_back(info.pe);
  return out;
}
inline const std::vector<PositionalEncoding> kAllPe =
    encodings_where([](const PositionalEncodingInfo&) { return true; });
// The encodings of relative distance (a cap applies; outputs do not move with a shift).
inline const std::vector<PositionalEncoding> kRelativePe =
    encodings_where([](const PositionalEncodingInfo& info) { return info.relative(); });

// A batch and how the model attends over it (models/attention_spec.hpp): one step's input. A
// Batch converts to one that attends plainly.
struct Step : Batch {
  AttentionSpec attention;
  Step() = default;
  Step(Batch b) : Batch(std::move(b)) {}  // NOLINT(google-explicit-constructor)
};

inline void pack_step(DPacked& in, const Step& step, const ModelConfig& c) {
  in.pack({&step}, c, {&step.attention});
}

// The batch's total loss (MSE on the scalar head + cross-entropy on the token head + the token
// rows' pair loss) after a forward; with grad, also its gradients into the model's grads().
inline double loss_of(DModel& m, const Step& batch, bool grad) {
  DPacked in;
  pack_step(in, batch, m.config());
  m.forward(in);
  const int R = in.n_scalar, R2 = in.n_token, V = m.config().vocab_size;
  std::vector<double> targets(batch.targets), dz(R), dlogits(static_cast<size_t>(R2) * V);
  double mse = 0, ce = 0;
  if (R > 0)
    cpu::mse_loss(dz.data(), &mse, m.scalar_out(), targets.data(), in.scalar_weights.data(), R);
  if (R2 > 0)
    cpu::cross_entropy_loss(dlogits.data(), &ce, m.token_logits(), in.token_labels.data(),
                            in.token_weights.data(), R2, V);
  double sce = 0;  // the misalignment pairs' loss, added into dlogits
  if (in.n_pairs > 0)
    cpu::pair_alignment_loss(dlogits.data(), &sce, m.token_logits(), in.pair_first.data(),
                             in.pair_second.data(), in.pair_weights.data(),
                             in.pair_entropy_weights.data(), in.n_pairs, R2, V);
  if (grad) {
    m.zero_grad();
    m.backward(in, R > 0 ? dz.data() : nullptr, R2 > 0 ? dlogits.data() : nullptr);
  }
  return mse + ce + sce;
}

// The initialisation plus noise: a learned bias starts at 0 (t5) and would show nothing.
inline void init_perturbed(DModel& model, uint64_t seed) {
  model.init(seed);
  std::vector<double> p = model.parameters(0);
  Rng rng(seed + 100);
  for (double& x : p) x += 0.3 * rng.normal();
  model.set_parameters(0, p.data());
}

// Scalar outputs [R] of one batch, through the training forward or the inference path.
inline std::vector<double> outputs(DModel& m, const Step& b, bool infer) {
  DPacked in;
  pack_step(in, b, m.config());
  infer ? m.infer(in) : m.forward(in);
  return m.download_scalar_out(in);
}

}  // namespace lenlab::test
