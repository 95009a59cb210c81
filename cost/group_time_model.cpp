#include "cost/group_time_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "tasks/token_tasks.hpp"

namespace lenlab {

bool usable(const GroupSpeed& s) {
  for (const double fixed : {s.step_s, s.length_s, s.row_s})
    if (!std::isfinite(fixed) || fixed < 0) return false;
  for (const double rate : {s.train_flops, s.eval_flops})
    if (!std::isfinite(rate) || rate <= 0) return false;
  return true;
}

double decoded_rows(const CostedRun& run, int length) {
  if (run.spec.test_attention.decode != "greedy" || !is_token_task(run.resolved.task)) return 0;
  return static_cast<double>(run.cost.n_depths) *
         static_cast<double>(tokens_per_sequence(run.resolved.task, run.spec.token, length));
}

GroupSeconds predicted_group_seconds(const std::vector<const CostedRun*>& runs,
                                     const GroupSpeed& speed) {
  GroupSeconds s;
  if (runs.empty()) return s;
  const int steps = runs[0]->spec.steps;  // one group: one number of steps
  double step_work = 0, check_work = 0, eval_work = 0;
  int check_lengths = 0;     // the stop rule's lengths over all its checks, the most any run has
  std::vector<int> lengths;  // every test length any run of the group is evaluated at
  std::vector<double> rows;  // the decoded rows at each of them, the most any run has
  std::set<std::string> trained;  // runs that differ only in test-time attention train one model
  for (const CostedRun* r : runs) {
    if (trained.insert(training_spec_text(r->spec)).second) {
      step_work += r->cost.train_step_flops;
      check_work += r->cost.fit_check_flops;
    }
    eval_work += r->cost.eval_flops;
    if (r->spec.until_fit.on) {
      const LengthRange range = r->resolved.train_lengths;
      check_lengths = std::max(
          check_lengths, (range.hi - range.lo + 1) * (r->spec.steps / r->spec.until_fit.every));
    }
    for (const int l : r->resolved.test_lengths) {
      const auto at = std::lower_bound(lengths.begin(), lengths.end(), l);
      const size_t i = static_cast<size_t>(at - lengths.begin());
      if (at == lengths.end() || *at != l) {
        lengths.insert(at, l);
        rows.insert(rows.begin() + static_cast<std::ptrdiff_t>(i), 0.0);
      }
      rows[i] = std::max(rows[i], decoded_rows(*r, l));
    }
  }
  s.train = steps * (speed.step_s + step_work / speed.train_flops) +
            check_lengths * speed.length_s + check_work / speed.eval_flops;
  double decoded = 0;
  for (const double r : rows) decoded += r;
  s.eval = static_cast<double>(lengths.size()) * speed.length_s + decoded * speed.row_s +
           eval_work / speed.eval_flops;
  return s;
}

std::string describe(const GroupSpeed& s) {
  return fmt::format(
      "a step {:.2f} ms + its work at {:.0f} GFLOP/s; a test length {:.2f} ms, a decoded row "
      "{:.3f} ms + its work at {:.0f} GFLOP/s",
      s.step_s * 1e3, s.train_flops * 1e-9, s.length_s * 1e3, s.row_s * 1e3, s.eval_flops * 1e-9);
}

}  // namespace lenlab
