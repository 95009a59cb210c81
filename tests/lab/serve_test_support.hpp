#pragma once
// What the live page's server tests share: tiny settings, their errors, a queue waited on
// (tests/lab/test_serve*.cpp).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <httplib.h>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "lab/serve/page_settings.hpp"
#include "lab/serve/run_queue.hpp"
#include "lab/serve/server.hpp"
#include "results/figure_setup.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"
#include "tests/support/serve_support.hpp"
#include "tests/support/test_support.hpp"

namespace lenlab::test {

using PageJson = nlohmann::ordered_json;

namespace fs = std::filesystem;

// A run of a few hundred milliseconds (more under the sanitizers).
inline PageJson tiny(PageJson extra = PageJson::object()) {
  PageJson j = {{"task", "length"}, {"l_train", 3},       {"l_test", 6},
                {"steps", 20},      {"d_model", 16},      {"n_head", 2},
                {"d_ff", 32},       {"eval_samples", 16}, {"warmup_steps", 2}};
  for (const auto& item : extra.items()) j[item.key()] = item.value();
  return j;
}

// An answer's JSON body (tests/support/serve_support.hpp's body_of), and its first error's message.
inline PageJson json_of(const std::string& answer) {
  return PageJson::parse(body_of(answer));
}
inline std::string message_of(const std::string& answer) {
  return json_of(answer)["errors"][0]["message"].get<std::string>();
}

inline std::vector<FieldError> errors_of(const PageJson& request) {
  return check_page_settings(request, Budget{}, false).errors;
}

inline PageJson wait_finished(const RunQueue& q, int number) {
  for (int i = 0; i < 6000; ++i) {
    const PageJson run = *q.run_json(number);
    const std::string state = run["state"];
    if (state != "queued" && state != "training" && state != "evaluating") return run;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  FAIL("run " << number << " did not finish in 120 s");
  return {};
}

}  // namespace lenlab::test
