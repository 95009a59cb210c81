#include "tasks/target_variance.hpp"

#include <fmt/format.h>

#include <boost/math/distributions/binomial.hpp>
#include <stdexcept>

#include "core/error.hpp"
#include "tasks/scalar_tasks.hpp"

namespace lenlab {

double target_variance(TaskKind task, int l_min, int l_max) {
  if (l_min < 1 || l_max < l_min)
    throw UsageError(fmt::format("training lengths must satisfy 1 <= l_min <= l_max (got {}..{})",
                                 l_min, l_max));
  const ScalarTaskMath* math = task_info(task).scalar;
  if (!math) throw std::logic_error("target_variance: not a scalar task");
  // E[y] and E[y²] over P(l) = 1/(l_max − l_min + 1) and P(k | l).
  double m1 = 0, m2 = 0;
  const double p_length = 1.0 / (l_max - l_min + 1);
  for (int l = l_min; l <= l_max; ++l) {
    const boost::math::binomial_distribution<double> bits(l, 0.5);
    for (int k = 0; k <= l; ++k) {
      const double p_k = math->uniform_count ? 1.0 / (l + 1) : boost::math::pdf(bits, k);
      const double y = math->target(l, k);
      m1 += p_length * p_k * y;
      m2 += p_length * p_k * y * y;
    }
  }
  return m2 - m1 * m1;
}

}  // namespace lenlab
