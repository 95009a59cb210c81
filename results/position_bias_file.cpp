#include "results/position_bias_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/error.hpp"
#include "models/position_bias.hpp"
#include "results/csv_rows.hpp"

namespace lenlab {

std::string position_bias_csv_text(const ModelConfig& c, const std::vector<double>& params,
                                   int max_distance) {
  const std::unique_ptr<PositionBias> bias = PositionBias::make(c);
  if (!bias) return "";
  const double* pe = encoding_block(c, params);
  const int cols = max_distance + 1;
  // FIRE: the rows of queries at 0..max_distance, of which the last is written.
  const int rows = bias->by_query_position() ? cols : 1;
  std::string out = "layer,head,distance,bias\n";
  for (int l = 0; l < c.n_layer; ++l) {
    const std::vector<double> table = bias->table(pe, bias->table_of_layer(l), rows, cols);
    for (int h = 0; h < c.n_head; ++h)
      for (int d = 0; d < cols; ++d)
        out += fmt::format("{},{},{},{:.9g}\n", l, h, d,
                           table[(static_cast<size_t>(h) * rows + rows - 1) * cols + d]);
  }
  return out;
}

PositionBiasValues parse_position_bias_csv(const std::string& text, const std::string& where) {
  CsvRows csv(text, where, "layer,head,distance,bias", "position bias");
  struct Entry {
    int l, h, d;
    double b;
  };
  std::vector<Entry> entries;
  PositionBiasValues out;
  while (csv.next()) {
    const Entry e{csv.integer(0), csv.integer(1), csv.integer(2), csv.finite(3)};
    if (e.l < 0 || e.h < 0 || e.d < 0 || e.l > 1024 || e.h > 65536 || e.d > 10'000'000)
      throw UsageError(fmt::format("{}: layer {}, head {} or distance {} out of range",
                                   csv.line_ref(), e.l, e.h, e.d));
    out.n_layer = std::max(out.n_layer, e.l + 1);
    out.n_head = std::max(out.n_head, e.h + 1);
    out.max_distance = std::max(out.max_distance, e.d);
    entries.push_back(e);
  }
  const size_t n = static_cast<size_t>(out.n_layer) * out.n_head * (out.max_distance + 1);
  if (entries.size() != n)
    throw UsageError(fmt::format("{}: {} rows, but {} layers × {} heads × {} distances need {}",
                                 where, entries.size(), out.n_layer, out.n_head,
                                 out.max_distance + 1, n));
  out.values.assign(n, std::nan(""));
  for (const Entry& e : entries)
    out.values[(static_cast<size_t>(e.l) * out.n_head + e.h) * (out.max_distance + 1) + e.d] = e.b;
  for (double v : out.values)
    if (std::isnan(v))
      throw UsageError(fmt::format("{}: a (layer, head, distance) repeats", where));
  return out;
}

}  // namespace lenlab
