#pragma once
// The validation sequences of a group's models (train/until_fit.hpp): the stop rule's checks while
// they train (--until-fit) and the trained models' score (--validate), each the task's in-range
// rule (results/in_range_fit.hpp) on sequences inside the training lengths drawn apart from the
// test's, all due models in one evaluation; and their records in the runs' manifests. Used by
// lab/run/run_group_impl.hpp for every backend.
#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "lab/run/run_group.hpp"
#include "models/model.hpp"
#include "results/in_range_fit.hpp"
#include "train/evaluate.hpp"
#include "train/trainer.hpp"
#include "train/until_fit.hpp"

namespace lenlab {

template <class B>
class GroupValidation {
 public:
  // Model m is trained by jobs[trainer_of[m]].
  GroupValidation(const std::vector<GroupJob>& jobs, const std::vector<int>& trainer_of)
      : jobs_(jobs), trainer_of_(trainer_of) {
    const int M = static_cast<int>(trainer_of.size());
    watches_.resize(M);
    rules_.resize(M);
    validated_.resize(M);
    for (int m = 0; m < M; ++m) {
      const GroupJob& job = jobs[trainer_of[m]];
      const TrainSpec& spec = job.spec;
      validation_.push_back(no_job());
      if (!spec.until_fit.on && !spec.validate) continue;
      rules_[m] = in_range_rule(spec);
      EvalJob& v = validation_[m] = eval_job(job.resolved, spec);
      v.lengths.clear();
      for (int l = rules_[m].lo; l <= rules_[m].hi; ++l) v.lengths.push_back(l);
      v.eval_samples = spec.until_fit.samples;
      v.eval_seed = validation_seed(spec.eval_seed);
      if (spec.until_fit.on)
        watches_[m].emplace(spec.until_fit, rules_[m].threshold, rules_[m].at_least);
    }
  }

  // The trainer's stop check (train/trainer.hpp): the models still training whose check is due
  // after `step`, scored together. Empty when no model has --until-fit.
  StopCheck stop_check(Model<B>& model) {
    if (std::none_of(watches_.begin(), watches_.end(), [](const auto& w) { return w.has_value(); }))
      return {};
    return [this, &model](int step, const std::vector<char>& training) {
      const int M = static_cast<int>(watches_.size());
      std::vector<char> due(M, 0), stops(M, 0);
      for (int m = 0; m < M; ++m)
        due[m] =
            watches_[m] && training[m] && step % jobs_[trainer_of_[m]].spec.until_fit.every == 0;
      const std::vector<std::optional<double>> scores = score(model, due);
      for (int m = 0; m < M; ++m)
        if (due[m])
          stops[m] = watches_[m]->observe(
              step, scores[m].value_or(std::numeric_limits<double>::quiet_NaN()));
      return stops;
    };
  }

  // --validate: the trained models' scores (diverged ones have none).
  void validate_trained(Model<B>& model, const std::vector<TrainOutcome>& outcomes) {
    std::vector<char> due(trainer_of_.size(), 0);
    for (size_t m = 0; m < due.size(); ++m)
      due[m] = jobs_[trainer_of_[m]].spec.validate && !outcomes[m].diverged;
    validated_ = score(model, due);
  }

  // Model m's records in a run's manifest: "until_fit" (every check and the stop) and
  // "validation" (the trained model's score), where its run asked for them.
  void write(nlohmann::ordered_json& manifest, int m, const TrainOutcome& o) const {
    const TrainSpec& spec = jobs_[trainer_of_[m]].spec;
    if (const std::optional<FitWatch>& watch = watches_[m]) {
      const int trained = o.stopped_step > 0 ? o.stopped_step
                          : o.diverged       ? o.diverged_step - 1
                                             : spec.steps;
      manifest["until_fit"] = watch->to_json(rules_[m].text(), trained);
    }
    if (const std::optional<double>& v = validated_[m])
      manifest["validation"] = {
          {"rule", rules_[m].text()},
          {"lengths", {rules_[m].lo, rules_[m].hi}},
          {"samples", spec.until_fit.samples},
          {"seed", validation_[m].eval_seed},
          {"value", std::isnan(*v) ? nlohmann::ordered_json() : nlohmann::ordered_json(*v)}};
  }

 private:
  // An empty job for a model not scored now (evaluate takes one job per model).
  EvalJob no_job() const {
    const ResolvedSpec& r = jobs_[0].resolved;
    return scalar_job(r.task, &r.reparam, {}, 1, 0);
  }

  // The in-range score of every model marked in `due`, in one evaluation; nullopt elsewhere.
  std::vector<std::optional<double>> score(Model<B>& model, const std::vector<char>& due) const {
    const int M = static_cast<int>(due.size());
    std::vector<std::optional<double>> out(M);
    if (std::find(due.begin(), due.end(), 1) == due.end()) return out;
    std::vector<EvalJob> jobs(M);
    for (int m = 0; m < M; ++m) jobs[m] = due[m] ? validation_[m] : no_job();
    const std::vector<std::vector<LengthResult>> results = evaluate(model, jobs);
    for (int m = 0; m < M; ++m)
      if (due[m]) out[m] = in_range_value(results[m], rules_[m]);
    return out;
  }

  const std::vector<GroupJob>& jobs_;
  const std::vector<int>& trainer_of_;
  std::vector<std::optional<FitWatch>> watches_;
  std::vector<InRangeRule> rules_;
  std::vector<EvalJob> validation_;
  std::vector<std::optional<double>> validated_;
};

}  // namespace lenlab
