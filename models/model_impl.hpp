#pragma once
// Model<B>'s definitions (models/model.hpp), included by the files that instantiate it for a
// backend (models/model.cpp for the CPU, models/cuda/model.cpp for CUDA): written once for every
// backend. Here the parameters, initialisation and what the forwards share; a block's forward and
// backward in models/model_block.hpp, the training pass in models/model_train.hpp, the inference
// forward in models/model_infer.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/rng.hpp"
#include "models/model.hpp"

namespace lenlab {

template <class B>
Model<B>::Model(const ModelConfig& config, int n_models) : config_(config), K_(n_models) {
  config_.validate();
  if (n_models < 1) throw std::invalid_argument("Model: n_models must be >= 1");
  P_ = parameter_count(config_);
  const size_t n = P_ * K_;
  B::reserve(params_, n);
  B::reserve(grads_, n);
  B::fill_zero(params_.data(), n);
  B::fill_zero(grads_.data(), n);
  w_ = bind_parameters(config_, params_.data());
  g_ = bind_parameters(config_, grads_.data());
  encoding_ = &encoding_math(config_.pe);
  bias_ = PositionBias::make(config_);
  for (const TensorInfo& t : parameter_layout(config_))
    if (t.name.rfind("pe.", 0) == 0) {
      pe_offset_ = t.offset;
      break;
    }
}

template <class B>
void Model<B>::init(int k, uint64_t seed) {
  Rng rng(seed);
  std::vector<T> p(P_);
  const std::vector<double> encoding = bias_ ? bias_->initial_parameters() : std::vector<double>{};
  const double residual_std = 0.02 / std::sqrt(2.0 * config_.n_layer);
  for (const TensorInfo& t : parameter_layout(config_)) {
    const double fan_in_std = 1.0 / std::sqrt(static_cast<double>(t.shape[0]));
    for (size_t i = t.offset; i < t.offset + t.size; ++i) {
      switch (t.init) {
        case InitKind::kOne:
          p[i] = T(1);
          break;
        case InitKind::kZero:
          p[i] = T(0);
          break;
        case InitKind::kNormal002:
          p[i] = static_cast<T>(0.02 * rng.normal());
          break;
        case InitKind::kNormalResidual:
          p[i] = static_cast<T>(residual_std * rng.normal());
          break;
        case InitKind::kFanIn:
          p[i] = static_cast<T>(fan_in_std * rng.normal());
          break;
        case InitKind::kEncoding:
          p[i] = static_cast<T>(encoding.at(i - pe_offset_));
          break;
      }
    }
  }
  set_parameters(k, p.data());
}

template <class B>
std::vector<typename B::Scalar> Model<B>::parameters(int k) const {
  std::vector<T> host(P_);
  B::download(host.data(), params_.data() + static_cast<size_t>(k) * P_, P_);
  return host;
}

template <class B>
std::vector<typename B::Scalar> Model<B>::gradients(int k) const {
  std::vector<T> host(P_);
  B::download(host.data(), grads_.data() + static_cast<size_t>(k) * P_, P_);
  return host;
}

template <class B>
void Model<B>::set_parameters(int k, const T* host) {
  B::upload_to(params_.data() + static_cast<size_t>(k) * P_, host, P_);
}

template <class B>
void Model<B>::zero_grad() {
  B::fill_zero(grads_.data(), P_ * K_);
}

template <class B>
std::vector<typename B::Scalar> Model<B>::download_scalar_out(const PackedBatch<B>& in) const {
  std::vector<T> host(static_cast<size_t>(K_) * in.n_scalar);
  B::download(host.data(), scalar_out_.data(), host.size());
  return host;
}

template <class B>
std::vector<typename B::Scalar> Model<B>::download_token_logits(const PackedBatch<B>& in) const {
  std::vector<T> host(static_cast<size_t>(K_) * in.n_token * config_.vocab_size);
  B::download(host.data(), token_out_.data(), host.size());
  return host;
}

template <class B>
std::vector<typename B::Scalar> Model<B>::download_attention_stats(const PackedBatch<B>& in,
                                                                   int l) const {
  if (!keep_stats_ || l < 0 || l >= config_.n_layer)
    throw std::invalid_argument("download_attention_stats: statistics not kept, or no such layer");
  const size_t H2 = static_cast<size_t>(config_.n_head) * 2;
  const size_t rows = std::max(in.rows, in.n_query());
  const int Q = l == config_.n_layer - 1 ? in.n_query() : in.rows;
  std::vector<T> host(static_cast<size_t>(K_) * Q * H2);
  B::download(host.data(), attention_stats_.data() + static_cast<size_t>(l) * K_ * rows * H2,
              host.size());
  return host;
}

template <class B>
std::vector<typename B::Scalar> Model<B>::download_attention_probabilities(const PackedBatch<B>& in,
                                                                           int l) const {
  if (l < 0 || l >= config_.n_layer)
    throw std::invalid_argument("download_attention_probabilities: no such layer");
  const size_t size = std::max<size_t>(1, static_cast<size_t>(K_) * in.prob_stride);
  if (act_.att.size() < (static_cast<size_t>(l) + 1) * size)
    throw std::invalid_argument("download_attention_probabilities: no forward() of this batch");
  std::vector<T> host(static_cast<size_t>(K_) * in.prob_stride);
  B::download(host.data(), act_.att.data() + static_cast<size_t>(l) * size, host.size());
  return host;
}

template <class B>
std::vector<typename B::Scalar> Model<B>::download_attention_output(const PackedBatch<B>& in,
                                                                    int l) const {
  if (l < 0 || l >= config_.n_layer)
    throw std::invalid_argument("download_attention_output: no such layer");
  const size_t Nd = static_cast<size_t>(K_) * in.rows * config_.d_model;
  // A layer's slot in act_.atty holds max(N, Q) rows per model; the last layer's every-row output
  // is act_.atty_all (forward()).
  const size_t slot = static_cast<size_t>(K_) * std::max(in.rows, in.n_query()) * config_.d_model;
  const bool last = l == config_.n_layer - 1;
  const Buffer<T>& from = last ? act_.atty_all : act_.atty;
  const size_t at = last ? 0 : static_cast<size_t>(l) * slot;
  if (from.size() < at + Nd)
    throw std::invalid_argument("download_attention_output: no forward() of this batch");
  std::vector<T> host(Nd);
  B::download(host.data(), from.data() + at, Nd);
  return host;
}

template <class B>
void Model<B>::prepare(const PackedBatch<B>& in) {
  if (in.n_models != K_)
    throw std::invalid_argument(
        fmt::format("Model: a batch packed for {} models given to {}", in.n_models, K_));
  prepare_tables(in.max_position, in.attention);
}

template <class B>
void Model<B>::prepare_tables(int max_position, const AttentionSpec& attention) {
  ++tables_version_;
  // RoPE by relative distance inside attention only when a cap bends it; otherwise q and k are
  // rotated by position beforehand (the same numbers, fewer operations).
  if (encoding_->absolute == AbsoluteTable::kFixed && max_position >= position_rows_) {
    // The rows up to the batch's largest position, computed in double and rounded.
    const int rows = max_position + 1, d = config_.d_model;
    std::vector<double> values(static_cast<size_t>(rows) * d);
    encoding_->absolute_values(0, rows, d, values.data());
    const std::vector<T> host(values.begin(), values.end());
    B::upload(position_table_, host.data(), host.size());
    position_rows_ = rows;
  }
  const ops::AttentionWindow& window = attention.window;
  rope_in_attention_ = rotary() && window.max_distance > 0;
  if (rotary()) {
    const int need = rope_in_attention_ ? window.max_distance + 1 : max_position + 1;
    // The batch's angles: plain, the extension the model trains with, or a test-time one
    // (models/rope_scaling.hpp)
    const RopeAngles angles = rope_angles(attention.rope_at(max_position, config_.rope_scaling),
                                          config_.head_dim(), config_.rope_base, max_position + 1);
    if (rope_host_.ensure(need, angles.theta, angles.position_scale)) {
      B::upload(rope_cos_, rope_host_.cos.data(), rope_host_.cos.size());
      B::upload(rope_sin_, rope_host_.sin.data(), rope_host_.sin.size());
    }
  }
  if (bias_) {  // distances 0 .. the longest (capped) one in the batch
    const int reach =
        window.max_distance > 0 ? std::min(window.max_distance, max_position) : max_position;
    // FIRE's rows: every query position of the batch
    update_bias_tables(bias_->by_query_position() ? max_position + 1 : 1, std::max(reach, 0) + 1);
  }
}

template <class B>
void Model<B>::update_bias_tables(int rows, int cols) {
  const int n_tables = bias_->n_tables();
  const size_t per = static_cast<size_t>(config_.n_head) * rows * cols;  // one model's table
  std::vector<T> host;
  if (!bias_->learned()) {  // the same for every model and every step (one row)
    if (cols <= bias_cols_) return;
    for (int t = 0; t < n_tables; ++t) {
      const std::vector<T> tab = bias_->template table_as<T>(nullptr, t, rows, cols);
      host.insert(host.end(), tab.begin(), tab.end());
    }
  } else {
    host.resize(static_cast<size_t>(n_tables) * K_ * per);
    const size_t n = bias_->n_parameters();
    std::vector<T> raw(n);
    for (int k = 0; k < K_; ++k) {
      B::download(raw.data(), params_.data() + static_cast<size_t>(k) * P_ + pe_offset_, n);
      const std::vector<double> pe(raw.begin(), raw.end());
      for (int t = 0; t < n_tables; ++t) {
        const std::vector<T> tab = bias_->template table_as<T>(pe.data(), t, rows, cols);
        std::copy(tab.begin(), tab.end(), host.begin() + (static_cast<size_t>(t) * K_ + k) * per);
      }
    }
  }
  B::upload(bias_tables_, host.data(), host.size());
  bias_rows_ = rows;
  bias_cols_ = cols;
}

template <class B>
void Model<B>::chain_bias_gradients() {
  const int n_tables = bias_->n_tables(), rows = bias_rows_, cols = bias_cols_;
  const size_t per = static_cast<size_t>(config_.n_head) * rows * cols, n = bias_->n_parameters();
  std::vector<T> dtables(static_cast<size_t>(n_tables) * K_ * per), raw(n), graw(n);
  B::download(dtables.data(), dbias_tables_.data(), dtables.size());
  for (int k = 0; k < K_; ++k) {
    const size_t at = static_cast<size_t>(k) * P_ + pe_offset_;
    B::download(raw.data(), params_.data() + at, n);
    const std::vector<double> pe(raw.begin(), raw.end());
    std::vector<double> dpe(n, 0.0);
    for (int t = 0; t < n_tables; ++t) {
      const auto first = dtables.begin() + (static_cast<size_t>(t) * K_ + k) * per;
      const std::vector<double> dtable(first, first + per);
      bias_->chain(pe.data(), t, rows, cols, dtable.data(), dpe.data());
    }
    B::download(graw.data(), grads_.data() + at, n);
    for (size_t i = 0; i < n; ++i) graw[i] = static_cast<T>(graw[i] + dpe[i]);
    B::upload_to(grads_.data() + at, graw.data(), n);
  }
}

template <class B>
ops::AttentionArgs<typename B::Scalar> Model<B>::attention_args(const AttentionSpec& attention,
                                                                const T* seq_scale, int l) const {
  ops::AttentionArgs<T> a;
  if (bias_) {
    const size_t per = static_cast<size_t>(config_.n_head) * bias_rows_ * bias_cols_;
    const size_t models = bias_->learned() ? K_ : 1;
    a.bias = bias_tables_.data() + bias_->table_of_layer(l) * models * per;
    a.bias_rows = bias_rows_;
    a.bias_cols = bias_cols_;
    a.bias_stride = bias_->learned() ? per : 0;
  }
  a.seq_scale = seq_scale;
  a.seq_scale_bias = attention.scale_covers_bias;
  a.window = attention.window;
  if (rope_in_attention_) {
    a.rope_cos = rope_cos_.data();
    a.rope_sin = rope_sin_.data();
  }
  return a;
}

// The heads the batch reads, on the last block's output x_q [K, Q, d] (its rows are the query
// rows, so each head reads its part of them). keep = false (inference) skips what only the
// backward needs.
template <class B>
void Model<B>::heads_forward(const T* x_q, const PackedBatch<B>& in, bool keep) {
  const ops::Models m = models();
  const int Q = in.n_query();
  if (in.n_scalar > 0) {
    B::reserve(scalar_out_, static_cast<size_t>(K_) * in.n_scalar);
    scalar_head_.forward(scalar_out_.data(), x_q, in.scalar_in_query.data(), in.n_scalar, Q,
                         config_, w_, m, keep);
  }
  if (in.n_token > 0) {
    B::reserve(token_out_, static_cast<size_t>(K_) * in.n_token * config_.vocab_size);
    token_head_.forward(token_out_.data(), x_q, in.token_in_query.data(), in.n_token, Q, config_,
                        w_, m, keep);
  }
}

}  // namespace lenlab

#include "models/model_block.hpp"
#include "models/model_decode.hpp"
#include "models/model_infer.hpp"
#include "models/model_train.hpp"
