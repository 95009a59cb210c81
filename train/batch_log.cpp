#include "train/batch_log.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iterator>
#include <string>
#include <vector>

namespace lenlab {
namespace {

// `"name": [v, v, ...]` with each value in fmt's shortest round-trip form.
template <class T>
void append_array(std::string& out, const char* name, const T* values, size_t n) {
  fmt::format_to(std::back_inserter(out), ", \"{}\": [{}]", name,
                 fmt::join(values, values + n, ", "));
}

template <class T>
void append_array(std::string& out, const char* name, const std::vector<T>& values) {
  append_array(out, name, values.data(), values.size());
}

}  // namespace

std::string batch_log_line(int step, const Batch& b, const double* f_targets) {
  std::string line = fmt::format("{{\"step\": {}", step);
  append_array(line, "tokens", b.tokens);
  append_array(line, "positions", b.positions);
  append_array(line, "offsets", b.offsets);
  if (b.n_read() > 0) {
    std::vector<double> weights(b.n_read());
    for (int r = 0; r < b.n_read(); ++r) weights[r] = b.weight(r);
    append_array(line, "scalar_rows", b.read_rows);
    append_array(line, "scalar_targets", f_targets, static_cast<size_t>(b.n_read()));
    append_array(line, "scalar_weights", weights);
  }
  if (b.token.size() > 0) {
    append_array(line, "token_rows", b.token.rows);
    append_array(line, "token_labels", b.token.labels);
    append_array(line, "token_weights", b.token.weights);
  }
  if (b.token.pairs.size() > 0) {
    append_array(line, "pair_first", b.token.pairs.first);
    append_array(line, "pair_second", b.token.pairs.second);
    append_array(line, "pair_weights", b.token.pairs.weights);
    append_array(line, "pair_entropy_weights", b.token.pairs.entropy_weights);
  }
  line += "}";
  return line;
}

BatchLog::BatchLog(const std::filesystem::path& path) : file_(path) {}

void BatchLog::append(int step, const Batch& batch, const double* f_targets) {
  file_.append(batch_log_line(step, batch, f_targets) + "\n");
}

}  // namespace lenlab
