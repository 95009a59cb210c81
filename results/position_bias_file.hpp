#pragma once
// position_bias.csv, the encoding's learned or fixed bias after training:
// `layer,head,distance,bias`, every layer's b_h(δ) (a shared table repeated per layer) for δ =
// 0..max_distance (paper 002's Figure 1). Written by a run's folder (lab/run/run_folder.cpp), read
// back into a RunRecord (results/run_record.hpp) for the figures.
#include <string>
#include <vector>

#include "models/model.hpp"

namespace lenlab {

// b by layer, head and distance 0..max_distance. Empty for an encoding without one.
struct PositionBiasValues {
  int n_layer = 0, n_head = 0, max_distance = -1;
  std::vector<double> values;  // [n_layer, n_head, max_distance + 1]
  bool empty() const { return values.empty(); }
  double at(int l, int h, int d) const {
    return values[(static_cast<size_t>(l) * n_head + h) * (max_distance + 1) + d];
  }
};

// The file's text from a model's whole parameter vector (FIRE: for a query at position
// max_distance, the last of the longest test sequence); "" when the encoding has no bias.
std::string position_bias_csv_text(const ModelConfig& c, const std::vector<double>& params,
                                   int max_distance);

// Its reader (UsageError naming `where` on a malformed or incomplete table).
PositionBiasValues parse_position_bias_csv(const std::string& text, const std::string& where);

}  // namespace lenlab
