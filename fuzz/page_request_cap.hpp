#pragma once
// What the fuzz targets that check a live page's request share: their work cap and their check of
// check_page_settings's answer.
//
// The work cap of the fuzz targets that check a live page's request (fuzz_page_settings,
// fuzz_serve_request; docs/fuzzing.md): check_page_settings resolves the request, and subsets of
// it, up to (keys + 1)^2 times; a request is not checked when that many resolves of its largest
// domain check (fuzz_caps.hpp's target_count, over the request's task, l_test and lengths) would
// evaluate f at more than kMaxPageTargetEvaluations targets, as many as fuzz_config's 16 resolves
// of at most kMaxTargets each. It skips work, never an input.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/error.hpp"
#include "fuzz/fuzz_caps.hpp"
#include "lab/serve/page_settings.hpp"
#include "train/run_settings.hpp"

namespace lenlab::fuzz {

constexpr double kMaxPageTargetEvaluations = 16 * kMaxTargets;

// The most target values one of check_page_settings's resolves can check (an upper bound): the
// request's settings may be resolved whole or in part, over the page's defaults, and only task,
// l_test and lengths (which sets l_test when l_test is not given) change the count. Settings of
// another type are left to check_page_settings (a nested value is never copied here).
inline double largest_domain_check(const nlohmann::ordered_json& request) {
  const TrainSpec base = page_base_spec();
  double most = target_count(base);
  int longest = base.l_test;
  bool mean = base.task.rfind("mean", 0) == 0;
  auto consider = [&](const nlohmann::ordered_json& settings) {
    try {
      const TrainSpec spec = spec_from_json(settings, base, "settings");
      most = std::max(most, target_count(spec));
      longest = std::max(longest, spec.l_test);
      mean = mean || spec.task.rfind("mean", 0) == 0;
    } catch (const UsageError&) {
    }
  };
  nlohmann::ordered_json drivers = nlohmann::ordered_json::object();
  for (const char* key : {"task", "l_test", "lengths"}) {
    const auto it = request.find(key);
    if (it == request.end() || it->is_structured()) continue;
    drivers[key] = *it;
    consider(nlohmann::ordered_json{{key, *it}});
  }
  consider(drivers);
  TrainSpec widest = base;
  widest.l_test = longest;
  widest.task = mean ? "mean" : "length";
  return std::max(most, target_count(widest));
}

// Whether check_page_settings may check this parsed request within the cap.
inline bool page_request_within_cap(const nlohmann::ordered_json& request) {
  if (!request.is_object()) return true;
  const double calls = static_cast<double>(request.size() + 1) * (request.size() + 1);
  return calls * largest_domain_check(request) <= kMaxPageTargetEvaluations;
}

// The answer's invariants: every field error has a message and belongs to a field of the request;
// settings accepted without an error resolve. `finding` reports a broken one (it does not return).
template <class Finding>
void check_page_answer(const nlohmann::ordered_json& request, const PageSettings& checked,
                       Finding finding) {
  std::set<std::string> fields;  // the request's (an ordered_json looks a key up in linear time)
  if (request.is_object())
    for (const auto& item : request.items()) fields.insert(item.key());
  for (const FieldError& e : checked.errors) {
    if (e.message.empty()) finding("an error without a message, field '" + e.field + "'");
    if (!e.field.empty() && fields.count(e.field) == 0)
      finding("an error beside '" + e.field + "', not a field of the request: " + e.message);
  }
  if (!checked.errors.empty()) {
    (void)errors_json(checked.errors).dump();
    return;
  }
  try {
    (void)resolve(checked.spec);
  } catch (const UsageError& e) {
    finding(std::string("settings accepted without an error that resolve() refuses: ") + e.what());
  }
}

}  // namespace lenlab::fuzz
