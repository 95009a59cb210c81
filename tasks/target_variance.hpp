#pragma once
// The spread of a scalar task's target over its training distribution: the scale against which an
// in-range error is small (results/in_range_fit.hpp: a run fits its training range when its
// in-range MSE is at most 1 % of this variance, i.e. it explains 99 % of the target's variance).
#include "tasks/task.hpp"

namespace lenlab {

// Var(y) when the length is uniform in l_min..l_max and the bits are drawn as the task draws them
// (independent fair bits: #ones ~ Binomial(l, 1/2); mean-uniform: #ones uniform in 0..l). Exact:
// a sum over every (length, #ones). std::logic_error for a token task; UsageError unless
// 1 <= l_min <= l_max.
double target_variance(TaskKind task, int l_min, int l_max);

}  // namespace lenlab
