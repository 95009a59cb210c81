// libFuzzer target: the body of `lenlab serve`'s POST /api/runs, handled as the server handles it
// (lab/serve/server.cpp) up to the point where a run would be queued: parse_page_request (a
// UsageError: the 400 with its message), then check_page_settings with the
// budget `lenlab serve` passes by default (--max-time 10m, --max-memory: the memory available) on a
// CPU machine, then the reply's body as the server builds it ({"errors": [{field, message}...]})
// and dumps it to text.
//
// The expected answers are a parse error's reply, a list of field errors, or a spec. Anything else
// is a finding: a crash, a sanitizer report, an exception escaping (libFuzzer reports it as a
// deadly signal; in the server, httplib turns it into a bare 500), a hang, unbounded memory, or a
// broken promise, checked here: every error has a message and names a field of the request (or
// none); a request with no error gives a spec that resolve() takes.
//
// Work cap (so that the fuzzer explores the checks rather than waits on huge valid settings; it
// skips work, never an input): check_page_settings resolves the request, and subsets of it, up to
// (keys + 1)^2 times; a request is not checked when that many resolves of its largest domain check
// (fuzz/fuzz_caps.hpp's target_count, over the request's task, l_test and lengths) would
// evaluate f at more than kMaxTargetEvaluations targets, as many as fuzz_config's 16 resolves of
// at most kMaxTargets each. Nothing is trained (the queue is never reached).
//
// Also replayed over fuzz/corpus/page_settings/ by the normal test suite (fuzz/replay_main.cpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cost/budget.hpp"
#include "fuzz/fuzz_caps.hpp"
#include "lab/serve/page_settings.hpp"
#include "train/run_settings.hpp"

namespace {

using Json = nlohmann::ordered_json;

constexpr double kMaxTargetEvaluations = 16 * lenlab::fuzz::kMaxTargets;

// Reports a broken promise and aborts, which libFuzzer records as a crash with this input.
[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_page_settings: %s\n", what.c_str());
  std::abort();
}

// The most target values one of check_page_settings's resolves can check (an upper bound): the
// request's settings may be resolved whole or in part, over the page's defaults, and only task,
// l_test and lengths (which sets l_test when l_test is not given) change the count. Settings of
// another type are left to check_page_settings (a nested value is never copied here).
double largest_domain_check(const Json& request) {
  const lenlab::TrainSpec base = lenlab::page_base_spec();
  double most = lenlab::fuzz::target_count(base);
  int longest = base.l_test;
  bool mean = base.task.rfind("mean", 0) == 0;
  auto consider = [&](const Json& settings) {
    try {
      const lenlab::TrainSpec spec = lenlab::spec_from_json(settings, base, "settings");
      most = std::max(most, lenlab::fuzz::target_count(spec));
      longest = std::max(longest, spec.l_test);
      mean = mean || spec.task.rfind("mean", 0) == 0;
    } catch (const lenlab::UsageError&) {
    }
  };
  Json drivers = Json::object();
  for (const char* key : {"task", "l_test", "lengths"}) {
    const auto it = request.find(key);
    if (it == request.end() || it->is_structured()) continue;
    drivers[key] = *it;
    consider(Json{{key, *it}});
  }
  consider(drivers);
  lenlab::TrainSpec widest = base;
  widest.l_test = longest;
  widest.task = mean ? "mean" : "length";
  return std::max(most, lenlab::fuzz::target_count(widest));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  Json request;
  try {
    request = lenlab::parse_page_request(body);
  } catch (const lenlab::UsageError& e) {
    (void)lenlab::errors_json({{"", e.what()}}).dump();  // strict: the message must be UTF-8
    return 0;
  }
  if (request.is_object()) {
    const double calls = static_cast<double>(request.size() + 1) * (request.size() + 1);
    if (calls * largest_domain_check(request) > kMaxTargetEvaluations) return 0;
  }
  lenlab::Budget budget;  // as `lenlab serve` sets it by default (lab/cli/serve_command.cpp)
  budget.max_time = "10m";
  const lenlab::PageSettings checked = lenlab::check_page_settings(request, budget, /*gpu=*/false);
  std::set<std::string> fields;  // the request's (an ordered_json looks a key up in linear time)
  if (request.is_object())
    for (const auto& item : request.items()) fields.insert(item.key());
  for (const lenlab::FieldError& e : checked.errors) {
    if (e.message.empty()) finding("an error without a message, field '" + e.field + "'");
    if (!e.field.empty() && fields.count(e.field) == 0)
      finding("an error beside '" + e.field + "', not a field of the request: " + e.message);
  }
  if (!checked.errors.empty()) {
    (void)lenlab::errors_json(checked.errors).dump();
    return 0;
  }
  try {
    (void)lenlab::resolve(checked.spec);
  } catch (const lenlab::UsageError& e) {
    finding(std::string("settings accepted without an error that resolve() refuses: ") + e.what());
  }
  return 0;
}
