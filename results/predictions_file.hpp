#pragma once
// predictions.csv (lenlab eval --predictions): every test sequence's input and the model's output,
// one row each, for comparison with another implementation (README's "Evaluating a trained run
// again" names the columns). Outputs and probabilities have 17 significant digits, a double's
// round trip, so that a float64 run's compare to 1e-10 (python/tests/test_to_torch.py). Its readers
// are tools/torch_reference and lenlab.Evaluation, outside C++.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reparam/reparam.hpp"
#include "tasks/batch.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab {

// predictions.csv: one row per test sequence, from the evaluation set the output came from
// (EvalJob::on_output). The rows are kept and inverted together in text(): one call of f⁻¹ over
// every output, which matters when f⁻¹ is a Python function (a call per sequence would not be).
class PredictionWriter {
 public:
  explicit PredictionWriter(const Reparam& reparam) : reparam_(reparam) {}

  void add(const Batch& b, int s, double z) {
    std::string input;  // the bits between BOS and EOS
    for (int i = b.offsets[s] + 1; i < b.offsets[s + 1] - 1; ++i)
      input += static_cast<char>('0' + b.tokens[i]);
    rows_.push_back({std::move(input), s, b.weight(s), b.targets[s], z});
  }

  std::string text() const {
    const size_t n = rows_.size();
    std::vector<double> z(n), y_hat(n);
    std::vector<unsigned char> clamped(n);
    for (size_t i = 0; i < n; ++i) z[i] = rows_[i].output;
    reparam_.inverse_many(z.data(), y_hat.data(), clamped.data(), n);
    std::string text = "length,sequence,weight,input,target,output,prediction,clamped\n";
    for (size_t i = 0; i < n; ++i) {
      const Row& r = rows_[i];
      text +=
          fmt::format("{},{},{:.17g},{},{:.17g},{:.17g},{:.17g},{}\n", r.input.size(), r.sequence,
                      r.weight, r.input, r.target, r.output, y_hat[i], clamped[i] ? 1 : 0);
    }
    return text;
  }

 private:
  struct Row {
    std::string input;
    int sequence;
    double weight, target, output;  // output: the model's z, in f's space
  };
  const Reparam& reparam_;
  std::vector<Row> rows_;
};

// predictions.csv of a token task: one row per test sequence, its tokens and, per answer row, the
// label, the probability the model gave it and the argmax (space-separated lists, in row order).
class TokenPredictionWriter {
 public:
  void add(const Batch& b, int length, double depth, int s, const std::vector<double>& p,
           const std::vector<int>& argmax) {
    if (length != length_ || depth != depth_) {  // a new cell's set
      length_ = length;
      depth_ = depth;
      offsets_ = token_readout_offsets(b);
    }
    const std::vector<int32_t>& offsets = offsets_;
    std::string input, labels, probs, arg;
    for (int i = b.offsets[s]; i < b.offsets[s + 1]; ++i)
      input += fmt::format("{}{}", i > b.offsets[s] ? " " : "", b.tokens[i]);
    for (int r = offsets[s]; r < offsets[s + 1]; ++r) {
      const int a = r - offsets[s];
      const char* sep = a > 0 ? " " : "";
      labels += fmt::format("{}{}", sep, b.token.labels[r]);
      probs += fmt::format("{}{:.17g}", sep, p[a]);
      arg += fmt::format("{}{}", sep, argmax[a]);
    }
    const int first_row = offsets[s + 1] > offsets[s] ? b.token.rows[offsets[s]] - b.offsets[s] : 0;
    text_ += fmt::format("{},{},{},{},{},{},{},{}\n", length,
                         depth == kNoDepth ? "" : fmt::format("{:.9g}", depth), s, input, first_row,
                         labels, probs, arg);
  }
  const std::string& text() const { return text_; }

 private:
  int length_ = 0;  // the cell offsets_ belongs to (cells come one after another)
  double depth_ = kNoDepth;
  std::vector<int32_t> offsets_;
  std::string text_ = "length,depth,sequence,tokens,first_answer_row,labels,p_label,argmax\n";
};

}  // namespace lenlab
