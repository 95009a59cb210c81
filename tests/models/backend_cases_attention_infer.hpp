#pragma once
// AttentionCase's checks of the inference forward ("attention_infer"): the output rows against
// the reference, padding 0, and each query row's entropy and largest probability against the
// formula's
// (tests/models/backend_cases_attention.hpp, which includes this after the case).
#include <string>
#include <vector>

namespace lenlab::test {

inline void AttentionCase::check_infer(const Host& h, const Outputs& o, const Where& w,
                                       const Packed& pk, const std::string& what) const {
  const std::vector<double>& out = o.get("out");
  const int nq = Q(pk);
  size_t padding_nonzero = 0, differ = 0;
  for (int k = 0; k < pk.K; ++k)
    for (int i = 0; i < nq; ++i) {
      const int r = query_rows.empty() ? i : h.i("query_rows")[static_cast<size_t>(k) * nq + i];
      for (int c = 0; c < d && (r < 0 || r >= pk.used(k)); ++c)
        padding_nonzero += out[(static_cast<size_t>(k) * nq + i) * d + c] != 0.0;
    }
  CHECK_MESSAGE(padding_nonzero == 0,
                what << ": " << padding_nonzero << " nonzero padding outputs");
  if (w.reference) {
    std::vector<double> all, probs, expected(out.size(), 0.0);
    formula(h, pk, all, probs);
    for (int k = 0; k < pk.K; ++k)
      for (int i = 0; i < nq; ++i) {
        const int r = query_rows.empty() ? i : h.i("query_rows")[static_cast<size_t>(k) * nq + i];
        if (r >= 0)
          std::copy_n(all.begin() + (static_cast<size_t>(k) * pk.N + r) * d, d,
                      expected.begin() + (static_cast<size_t>(k) * nq + i) * d);
      }
    expect_close(what + " out, by the formula", out, expected, 1e-12, 1e-12);
    expect_close(what + " entropy and largest probability, by the formula", o.get("stats"),
                 formula_stats(h, pk, probs), 1e-12, 1e-12);
  }
  // On the CPU, query rows are computed by the training forward's own row function (run() keeps
  // that forward on its row path for these rows); every row at once takes matrix products (same
  // numbers, other sums: the tolerance above).
  if (w.device || (query_rows.empty() && rope != Rope::kInAttention)) return;
  for (size_t i = 0; i < out.size(); ++i) differ += out[i] != o.get("forward rows")[i];
  CHECK_MESSAGE(differ == 0,
                what << ": " << differ << " outputs differ from attention_forward's (to the bit)");
}

// Each query's (entropy, largest probability) per head, [K, Q, n_head, 2], from the formula's
// probabilities (ProbLayout order: [K][S][n_head][L, L]); padding 0.
inline std::vector<double> AttentionCase::formula_stats(const Host& h, const Packed& pk,
                                                        const std::vector<double>& probs) const {
  const int nq = Q(pk);
  std::vector<double> st(static_cast<size_t>(pk.K) * nq * n_head * 2, 0.0);
  std::vector<size_t> model_start(pk.K + 1, 0);  // each model's first block in probs
  for (int k = 0; k < pk.K; ++k) {
    size_t n = 0;
    for (int s = 0; s < pk.S; ++s) {
      const size_t L = pk.model_offsets(k)[s + 1] - pk.model_offsets(k)[s];
      n += n_head * L * L;
    }
    model_start[k + 1] = model_start[k] + n;
  }
  for (int k = 0; k < pk.K; ++k)
    for (int i = 0; i < nq; ++i) {
      const int r = query_rows.empty() ? i : h.i("query_rows")[static_cast<size_t>(k) * nq + i];
      if (r < 0 || r >= pk.used(k)) continue;
      size_t block = model_start[k];
      for (int s = 0; s < pk.S; ++s) {
        const int first = pk.model_offsets(k)[s], L = pk.model_offsets(k)[s + 1] - first;
        if (r >= first + L) {
          block += static_cast<size_t>(n_head) * L * L;
          continue;
        }
        for (int head = 0; head < n_head; ++head) {
          const double* p =
              probs.data() + block + (static_cast<size_t>(head) * L + (r - first)) * L;
          double entropy = 0, largest = 0;
          for (int j = 0; j < L; ++j) {
            if (p[j] > 0) entropy -= p[j] * std::log(p[j]);
            largest = std::max(largest, p[j]);
          }
          double* out = st.data() + ((static_cast<size_t>(k) * nq + i) * n_head + head) * 2;
          out[0] = entropy;
          out[1] = largest;
        }
        break;
      }
    }
  return st;
}

}  // namespace lenlab::test
