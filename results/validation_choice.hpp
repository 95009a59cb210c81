#pragma once
// A config's [select] (results/figure_setup.hpp's SettingGrid) keeps, per line and seed, one of
// the runs its grid tried: the one whose trained model scores best on validation sequences inside
// its training range (RunRecord::validation, by its task's in-range rule: the larger accuracy, the
// smaller error). Only that score is read: a run's test results never choose it.
#include <cstdint>
#include <vector>

#include "results/run_record.hpp"

namespace lenlab {

// The run with the best validation score, the first in `tried`'s order among equals; runs that are
// not completed or have no score are never chosen. Null when none can be.
const RunRecord* choose_on_validation(const std::vector<const RunRecord*>& tried);

// One line and seed's choice, for the report: the runs tried (completed ones, in grid order) and
// the one kept.
struct GridChoice {
  uint64_t seed = 0;
  std::vector<const RunRecord*> tried;
  const RunRecord* chosen = nullptr;
};

}  // namespace lenlab
