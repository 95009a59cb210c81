#include "results/validation_choice.hpp"

#include "results/in_range_fit.hpp"

namespace lenlab {

const RunRecord* choose_on_validation(const std::vector<const RunRecord*>& tried) {
  const RunRecord* best = nullptr;
  bool at_least = true;
  for (const RunRecord* r : tried) {
    if (r->status != "completed" || !r->validation) continue;
    if (!best) {
      best = r;
      at_least = in_range_rule(r->spec).at_least;  // one task per line: one direction
      continue;
    }
    const double v = *r->validation, b = *best->validation;
    if (at_least ? v > b : v < b) best = r;
  }
  return best;
}

}  // namespace lenlab
