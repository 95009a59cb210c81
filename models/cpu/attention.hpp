#pragma once
// Multi-head causal self-attention over a packed batch, one (sequence, head) pair at a time.
//   qkv [N, 3d]: row t = [q | k | v], head h owns columns h·hd .. (h+1)·hd of each third.
//   out [N, d]:  the heads' outputs side by side (before the output projection).
//   att: softmax probabilities, for sequence s and head h an [L_s, L_s] block (row i = query i,
//        entries j > i are 0) at att + att_offsets[s] + h·L_s²; saved for the backward pass.
// Logits: s_ij = logit_scale · q_i·k_j / √hd − slope_h·(i − j)  for j ≤ i (causal mask).
// Positional encodings enter here only through the ALiBi slopes; RoPE rotates q and k beforehand
// (rope.hpp); NoPE and learned positions need nothing.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace lenlab::cpu {

template <class T>
struct AttentionOptions {
  const T* alibi_slopes = nullptr;  // [n_head], or null for no bias
  // Multiplies the logits: 1/temperature. Kept as an option for inference-time temperature
  // alignment; training uses 1.
  T logit_scale = 1;
};

// Offsets of each sequence's probability blocks in `att`: [n_seq + 1], in elements.
inline std::vector<size_t> attention_offsets(const int* offsets, int n_seq, int n_head) {
  std::vector<size_t> out(n_seq + 1, 0);
  for (int s = 0; s < n_seq; ++s) {
    const size_t L = static_cast<size_t>(offsets[s + 1] - offsets[s]);
    out[s + 1] = out[s] + static_cast<size_t>(n_head) * L * L;
  }
  return out;
}

// Press et al.'s slopes: a geometric sequence starting at 2^(-8/n) with that ratio; for a head
// count that is not a power of two, the closest power's slopes plus every other slope of the next.
inline std::vector<double> alibi_slopes(int n_head) {
  auto pow2_slopes = [](int n) {
    std::vector<double> s(n);
    const double start = std::pow(2.0, -8.0 / n);
    for (int i = 0; i < n; ++i) s[i] = std::pow(start, i + 1);
    return s;
  };
  int closest = 1;
  while (closest * 2 <= n_head) closest *= 2;
  std::vector<double> slopes = pow2_slopes(closest);
  if (closest < n_head) {
    const std::vector<double> extra = pow2_slopes(2 * closest);
    for (int i = 0; static_cast<int>(slopes.size()) < n_head; i += 2) slopes.push_back(extra[i]);
  }
  return slopes;
}

template <class T>
void attention_forward(T* out, T* att, const T* qkv, const int* offsets,
                       const std::vector<size_t>& att_offsets, int n_seq, int d, int n_head,
                       const AttentionOptions<T>& opt) {
  const int hd = d / n_head, C3 = 3 * d;
  const T scale = opt.logit_scale / std::sqrt(static_cast<T>(hd));
#pragma omp parallel for schedule(dynamic, 4)
  for (int sh = 0; sh < n_seq * n_head; ++sh) {
    const int s = sh / n_head, h = sh % n_head;
    const int base = offsets[s], L = offsets[s + 1] - offsets[s];
    T* P = att + att_offsets[s] + static_cast<size_t>(h) * L * L;
    const T slope = opt.alibi_slopes ? opt.alibi_slopes[h] : T(0);
    for (int i = 0; i < L; ++i) {
      const T* q = qkv + static_cast<size_t>(base + i) * C3 + h * hd;
      T* p = P + static_cast<size_t>(i) * L;
      T max_logit = -INFINITY;
      for (int j = 0; j <= i; ++j) {
        const T* k = qkv + static_cast<size_t>(base + j) * C3 + d + h * hd;
        T dot = 0;
        for (int c = 0; c < hd; ++c) dot += q[c] * k[c];
        p[j] = dot * scale - slope * static_cast<T>(i - j);
        max_logit = std::max(max_logit, p[j]);
      }
      T sum = 0;
      for (int j = 0; j <= i; ++j) {
        p[j] = std::exp(p[j] - max_logit);
        sum += p[j];
      }
      const T inv = T(1) / sum;
      for (int j = 0; j <= i; ++j) p[j] *= inv;
      for (int j = i + 1; j < L; ++j) p[j] = 0;
      T* o = out + static_cast<size_t>(base + i) * d + h * hd;
      for (int c = 0; c < hd; ++c) o[c] = 0;
      for (int j = 0; j <= i; ++j) {
        const T* v = qkv + static_cast<size_t>(base + j) * C3 + 2 * d + h * hd;
        for (int c = 0; c < hd; ++c) o[c] += p[j] * v[c];
      }
    }
  }
}

// Adds into dqkv. Needs the forward's qkv and att.
template <class T>
void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* att, const int* offsets,
                        const std::vector<size_t>& att_offsets, int n_seq, int d, int n_head,
                        const AttentionOptions<T>& opt) {
  const int hd = d / n_head, C3 = 3 * d;
  const T scale = opt.logit_scale / std::sqrt(static_cast<T>(hd));
#pragma omp parallel
  {
    std::vector<T> dp;  // dL/dp_ij for one query row
#pragma omp for schedule(dynamic, 4)
    for (int sh = 0; sh < n_seq * n_head; ++sh) {
      const int s = sh / n_head, h = sh % n_head;
      const int base = offsets[s], L = offsets[s + 1] - offsets[s];
      const T* P = att + att_offsets[s] + static_cast<size_t>(h) * L * L;
      dp.resize(L);
      for (int i = 0; i < L; ++i) {
        const T* p = P + static_cast<size_t>(i) * L;
        const T* dout_i = dout + static_cast<size_t>(base + i) * d + h * hd;
        const size_t qrow = static_cast<size_t>(base + i) * C3 + h * hd;
        // o_i = Σ_j p_ij v_j  =>  dp_ij = do_i·v_j,  dv_j += p_ij do_i
        T dot_pdp = 0;
        for (int j = 0; j <= i; ++j) {
          const size_t vrow = static_cast<size_t>(base + j) * C3 + 2 * d + h * hd;
          T acc = 0;
          for (int c = 0; c < hd; ++c) {
            acc += dout_i[c] * qkv[vrow + c];
            dqkv[vrow + c] += p[j] * dout_i[c];
          }
          dp[j] = acc;
          dot_pdp += p[j] * acc;
        }
        // p_i = softmax(s_i)  =>  ds_ij = p_ij (dp_ij − Σ_k p_ik dp_ik)
        // s_ij = scale·q_i·k_j + bias  =>  dq_i += scale·ds_ij k_j,  dk_j += scale·ds_ij q_i
        for (int j = 0; j <= i; ++j) {
          const T ds = p[j] * (dp[j] - dot_pdp) * scale;
          const size_t krow = static_cast<size_t>(base + j) * C3 + d + h * hd;
          for (int c = 0; c < hd; ++c) {
            dqkv[qrow + c] += ds * qkv[krow + c];
            dqkv[krow + c] += ds * qkv[qrow + c];
          }
        }
      }
    }
  }
}

}  // namespace lenlab::cpu
