#pragma once
// The CUDA backend's operations: exactly models/cpu's operations, same names and the same
// arguments in the same order (models/ops/args.hpp: outputs, inputs, weights, sizes, then the
// shared structs), on device pointers and in float. The CPU versions are the reference each of
// these is tested against (tests/models/backend_cases.hpp). Every launch is checked
// (models/cuda/check.hpp); all work goes to the calling thread's default stream, in order.
// Deterministic: no floating-point atomics; every reduction runs in a fixed order.
#include <cstddef>
#include <cstdint>

#include "models/ops/args.hpp"

namespace lenlab::cuda {

using ops::AdamWStep;
using ops::Models;
using ops::ProbLayout;
using ops::Seqs;
using AttentionArgs = ops::AttentionArgs<float>;

// ---- linear (cuBLAS) ---- out [K, N, OC] = inp [K, N, C] · w [C, OC] + b [OC]; b may be null.
void linear_forward(float* out, const float* inp, const float* w, const float* b, int N, int C,
                    int OC, Models m = {});
// Adds into dinp [K, N, C], dw [C, OC], db [OC] (any may be null to skip it).
void linear_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp,
                     const float* w, int N, int C, int OC, Models m = {});

// ---- layer norm over the feature axis, eps 1e-5 ---- out [K, N, C]; mean, rstd [K, N] (either
// may be null when no backward follows).
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* g,
                       const float* b, int N, int C, Models m = {});
// Adds into dinp [K, N, C], dg [C], db [C].
void layernorm_backward(float* dinp, float* dg, float* db, const float* dout, const float* inp,
                        const float* g, const float* mean, const float* rstd, int N, int C,
                        Models m = {});

// ---- GELU, tanh approximation; elementwise over n entries ---- th may be null.
void gelu_forward(float* out, float* th, const float* inp, size_t n);
void gelu_backward(float* dinp, const float* inp, const float* th, const float* dout, size_t n);
// y [n] += x [n] (the residual connections).
void add_inplace(float* y, const float* x, size_t n);

// ---- embedding and row gathers ----
// out [K, N, d] = token_scale·wte[token] + wpe[position] (wpe may be null; model k's table
// wpe_stride past model 0's: the param stride for a learned one, 0 for a shared fixed one); tokens
// [K, N]; padding rows 0.
void embedding_forward(float* out, const int* tokens, const float* wte, float token_scale,
                       const float* wpe, size_t wpe_stride, int d, Seqs q, Models m = {});
// Adds token_scale·dout into dwte [vocab, d] and dout into dwpe [n_positions, d] (if not null),
// summing rows in order.
void embedding_backward(float* dwte, float token_scale, float* dwpe, const float* dout,
                        const int* tokens, int vocab, int n_positions, int d, Seqs q,
                        Models m = {});
// out [K, R, d] = rows `rows` [K, R] of inp [K, N, d]; a row < 0 gives 0.
void gather_rows_forward(float* out, const float* inp, const int* rows, int R, int N, int d,
                         Models m = {});
// Adds dout [K, R, d] into the gathered rows of dinp [K, N, d]. Rows read twice are summed in
// order of i.
void gather_rows_backward(float* dinp, const float* dout, const int* rows, int R, int N, int d,
                          Models m = {});

// ---- VCL's random prefix (models/cpu/prefix_noise.hpp) ---- out [K, N, d] from x, noise
// [K, N, d] and row codes [K, N] (ops::PrefixNoiseCode); padding rows 0.
void prefix_noise_forward(float* out, const float* x, const float* noise, const int* codes, int d,
                          Seqs q, Models m = {});
// Adds dLoss/dx into dx [K, N, d] (through the stats rows' μ and σ too).
void prefix_noise_backward(float* dx, const float* dout, const float* x, const float* noise,
                           const int* codes, int d, Seqs q, Models m = {});

// ---- RoPE ---- cos, sin [positions, hd/2] (ops::RopeTable<float>'s, uploaded), covering the
// largest position. out [K, N, 3d] = qkv with q and k rotated by the row's position, v copied.
void rope_forward(float* out, const float* inp, const float* cos, const float* sin, int d,
                  int n_head, Seqs q, Models m = {});
void rope_backward(float* dinp, const float* dout, const float* cos, const float* sin, int d,
                   int n_head, Seqs q, Models m = {});

// ---- attention (models/cpu/attention.hpp, attention_infer.hpp) ----
void attention_forward(float* out, float* att, const float* qkv, int d, int n_head,
                       const AttentionArgs& a, ProbLayout prob, Seqs q, Models m = {});
// Adds into dqkv [K, N, 3d]. scratch: K·prob.stride floats of workspace (dLoss/dlogits).
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                        const float* att, int d, int n_head, const AttentionArgs& a,
                        ProbLayout prob, Seqs q, Models m = {});
// out [K, Q, d] at the query rows [K, Q] (< 0: padding, 0), or every row when null (Q = N).
// Keeps nothing for a backward and no [L, L] matrix: an online softmax over the keys. head_dim
// at most 256 (std::invalid_argument otherwise).
void attention_infer(float* out, const float* qkv, const int* query_rows, int Q, int d, int n_head,
                     const AttentionArgs& a, Seqs q, Models m = {});

// ---- losses (models/cpu/loss.hpp) ---- target, weight [K, R] double; loss [K] double.
void mse_loss(float* dpred, double* loss, const float* pred, const double* target,
              const double* weight, int R, Models m = {});
void cross_entropy_loss(float* dlogits, double* loss, const float* logits, const int* labels,
                        const double* weight, int R, int V, Models m = {});
void pair_alignment_loss(float* dlogits, double* loss, const float* logits, const int* first,
                         const int* second, const double* weight, const double* entropy_weight,
                         int P, int R, int V, Models m = {});

// ---- optimizer (models/cpu/optimizer.hpp) ---- norms [K], steps [K], losses [K] (or null).
void grad_norm(double* norms, const float* grads, size_t n, Models m = {});
void adamw_step(float* params, const float* grads, float* m1, float* m2, const float* decay_mask,
                const AdamWStep* steps, const double* norms, const double* losses, size_t n,
                Models m = {});

}  // namespace lenlab::cuda
