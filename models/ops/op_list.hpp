#pragma once
// The thin dispatch between the model (written once, models/model.hpp) and a backend's
// operations: a backend is a type with the scalar it computes in, its buffer type, memory helpers,
// and every operation of this list forwarded to its namespace (cpu:: or cuda::), each with the
// arguments of models/ops/args.hpp in the same order. The backends: models/cpu/backend.hpp and
// models/cuda/backend.hpp.

// Every operation a backend provides, by name; each backend forwards all of them.
#define LENLAB_BACKEND_OPS(X)                                                                    \
  X(linear_forward)                                                                              \
  X(linear_backward)                                                                             \
  X(layernorm_forward) X(layernorm_backward) X(gelu_forward) X(gelu_backward) X(add_inplace)     \
      X(embedding_forward) X(embedding_backward) X(prefix_noise_forward)                         \
          X(prefix_noise_backward) X(gather_rows_forward) X(gather_rows_backward)                \
              X(rope_forward) X(rope_backward) X(attention_forward) X(attention_backward)        \
                  X(attention_infer) X(mse_loss) X(cross_entropy_loss) X(pair_alignment_loss)    \
                      X(grad_norm) X(adamw_step)
