#include "report/setup_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace lenlab {

std::string setup_text(const TrainSpec& s, bool with_pe, bool with_l_train) {
  return fmt::format("{}{}, {} layers × d_model {}, {} steps{}", s.task,
                     with_pe ? " with " + s.pe : "", s.n_layer, s.d_model, s.steps,
                     with_l_train ? fmt::format(", l_train {}", s.l_train) : "");
}

int longest_length(const std::vector<const RunRecord*>& runs) {
  int longest = 0;
  for (const RunRecord* r : runs)
    for (const LengthResult& row : r->results) longest = std::max(longest, row.length);
  return longest;
}

std::string beyond_range_text(int l_train, int longest) {
  return fmt::format("lengths {}..{} = (1×, {:.3g}×] l_train", l_train + 1, longest,
                     static_cast<double>(longest) / l_train);
}

std::string seed_list(const std::vector<uint64_t>& seeds) {
  if (seeds.empty()) return "none";
  return fmt::format("seed{} {}", seeds.size() > 1 ? "s" : "", fmt::join(seeds, ", "));
}

}  // namespace lenlab
