#pragma once
// One contiguous parameter buffer and named views into it (after llm.c's ParameterTensors).
// The same struct views the gradients and the optimizer moments, so AdamW, the global gradient
// norm and parity checks are flat loops over one buffer. All matrices are row-major [in, out]:
// a linear layer computes y = x·W + b with x [tokens, in].
#include <cstddef>
#include <string>
#include <vector>

#include "models/config.hpp"
#include "models/encodings/encoding_math.hpp"

namespace lenlab {

template <class T>
struct ParameterTensors {
  struct Layer {
    T* ln1_g;   // [d]
    T* ln1_b;   // [d]
    T* w_qkv;   // [d, 3d]  columns: q | k | v, head h owns columns h·hd .. (h+1)·hd of each
    T* b_qkv;   // [3d]
    T* w_o;     // [d, d]   attention output projection
    T* b_o;     // [d]
    T* ln2_g;   // [d]
    T* ln2_b;   // [d]
    T* w_fc;    // [d, d_ff]
    T* b_fc;    // [d_ff]
    T* w_proj;  // [d_ff, d]
    T* b_proj;  // [d]
  };
  T* wte = nullptr;  // [vocab, d] token embedding
  T* wpe = nullptr;  // [max_positions, d] learned positions only, else nullptr
  // The positional bias's parameters (models/position_bias.hpp), contiguous, in the order of its
  // EncodingMath::bias_tensors (t5's table in [0]; kerple's r1 and r2 in [0] and [1]; fire's w1,
  // b1, w2, c, L in [0..4]); null when the encoding has none.
  T* pe_bias[6] = {};
  std::vector<Layer> layers;
  T* lnf_g = nullptr;    // [d] final layer norm
  T* lnf_b = nullptr;    // [d]
  T* head_w1 = nullptr;  // [d, d] scalar head on its rows: GELU(z·W1 + b1)·w2 + b2 (if present)
  T* head_b1 = nullptr;  // [d]
  T* head_w2 = nullptr;  // [d, 1]
  T* head_b2 = nullptr;  // [1]
  T* lm_w = nullptr;     // [d, vocab] token head: logits = z·W + b (if present)
  T* lm_b = nullptr;     // [vocab]
};

// Visits every tensor in storage order: visit(name, shape, slot, init) where slot is the view's
// pointer member. The single source of truth for names, shapes, order and initialisation.
template <class T, class Visit>
void visit_parameters(const ModelConfig& c, ParameterTensors<T>& p, Visit&& visit) {
  using Shape = std::vector<int>;
  const int d = c.d_model, f = c.d_ff;
  visit("wte", Shape{c.vocab_size, d}, p.wte, InitKind::kNormal002);
  // The encoding's parameters (models/encodings/): a learned position table, its bias's tensors.
  const EncodingMath& encoding = encoding_math(c.pe);
  if (encoding.absolute == AbsoluteTable::kLearned)
    visit("wpe", Shape{c.max_positions, d}, p.wpe, InitKind::kNormal002);
  if (encoding.bias_tensors) {
    const std::vector<EncodingTensor> tensors = encoding.bias_tensors(c);
    for (size_t i = 0; i < tensors.size(); ++i)
      visit(tensors[i].name, tensors[i].shape, p.pe_bias[i], tensors[i].init);
  }
  p.layers.resize(c.n_layer);
  for (int l = 0; l < c.n_layer; ++l) {
    auto& L = p.layers[l];
    const std::string n = "h." + std::to_string(l) + ".";
    visit(n + "ln_1.weight", Shape{d}, L.ln1_g, InitKind::kOne);
    visit(n + "ln_1.bias", Shape{d}, L.ln1_b, InitKind::kZero);
    visit(n + "attn.c_attn.weight", Shape{d, 3 * d}, L.w_qkv, InitKind::kNormal002);
    visit(n + "attn.c_attn.bias", Shape{3 * d}, L.b_qkv, InitKind::kZero);
    visit(n + "attn.c_proj.weight", Shape{d, d}, L.w_o, InitKind::kNormalResidual);
    visit(n + "attn.c_proj.bias", Shape{d}, L.b_o, InitKind::kZero);
    visit(n + "ln_2.weight", Shape{d}, L.ln2_g, InitKind::kOne);
    visit(n + "ln_2.bias", Shape{d}, L.ln2_b, InitKind::kZero);
    visit(n + "mlp.c_fc.weight", Shape{d, f}, L.w_fc, InitKind::kNormal002);
    visit(n + "mlp.c_fc.bias", Shape{f}, L.b_fc, InitKind::kZero);
    visit(n + "mlp.c_proj.weight", Shape{f, d}, L.w_proj, InitKind::kNormalResidual);
    visit(n + "mlp.c_proj.bias", Shape{d}, L.b_proj, InitKind::kZero);
  }
  visit("ln_f.weight", Shape{d}, p.lnf_g, InitKind::kOne);
  visit("ln_f.bias", Shape{d}, p.lnf_b, InitKind::kZero);
  // Heads last, each only when the model has it, so adding a head never moves another tensor.
  if (c.scalar_head) {
    visit("head.fc1.weight", Shape{d, d}, p.head_w1, InitKind::kFanIn);
    visit("head.fc1.bias", Shape{d}, p.head_b1, InitKind::kZero);
    visit("head.fc2.weight", Shape{d, 1}, p.head_w2, InitKind::kFanIn);
    visit("head.fc2.bias", Shape{1}, p.head_b2, InitKind::kZero);
  }
  if (c.token_head) {
    visit("lm_head.weight", Shape{d, c.vocab_size}, p.lm_w, InitKind::kNormal002);
    visit("lm_head.bias", Shape{c.vocab_size}, p.lm_b, InitKind::kZero);
  }
}

struct TensorInfo {
  std::string name;
  std::vector<int> shape;
  size_t offset;  // into the flat buffer, in elements
  size_t size;
  InitKind init;
};

// Names, shapes and offsets of every tensor for a config (independent of the scalar type).
std::vector<TensorInfo> parameter_layout(const ModelConfig& c);
size_t parameter_count(const ModelConfig& c);

// Views of `base` (which must hold parameter_count(c) elements).
template <class T>
ParameterTensors<T> bind_parameters(const ModelConfig& c, T* base) {
  ParameterTensors<T> p;
  size_t offset = 0;
  visit_parameters(c, p,
                   [&](const std::string&, const std::vector<int>& shape, T*& slot, InitKind) {
                     slot = base + offset;
                     size_t n = 1;
                     for (int s : shape) n *= static_cast<size_t>(s);
                     offset += n;
                   });
  return p;
}

}  // namespace lenlab
