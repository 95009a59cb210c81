// The memory estimate counts every table a model allocates: the encoding's parameters (t5's bucket
// table, FIRE's MLP, kerple's slopes, a learned position table) enter "parameters" exactly as the
// model allocates them, so a huge --t5-buckets is refused by the budget before anything is
// allocated.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "cost/budget.hpp"
#include "cost/run_cost.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;

namespace {

double part(const RunCost& cost, const std::string& name) {
  for (const CostPart& p : cost.memory_parts)
    if (p.what == name) return p.amount;
  FAIL("no memory part ", name);
  return 0;
}

}  // namespace

TEST_CASE("the estimate's parameters are the ones the model allocates, every encoding's tables") {
  for (const char* pe : {"nope", "learned", "t5", "fire", "kerple", "alibi", "rope"}) {
    for (const int buckets : {8, 64}) {
      CAPTURE(pe);
      CAPTURE(buckets);
      TrainSpec s;
      s.pe = pe;
      if (s.pe == "t5") {
        s.t5_buckets = buckets;
        s.t5_max_distance = 200;
      }
      s.d_model = 16;
      s.n_head = 2;
      s.d_ff = 32;
      const CostedRun run(s);
      const Transformer<float> model(run.resolved.model);
      // "parameters": the weights and the checkpoint's copy, in float.
      CHECK(part(run.cost, "parameters") == 2.0 * 4 * static_cast<double>(model.num_parameters()));
    }
  }
}

TEST_CASE("the estimate grows with t5's bucket count as the allocation does") {
  const auto bytes = [](int buckets, bool per_layer) {
    TrainSpec s;
    s.pe = "t5";
    s.t5_buckets = buckets;
    s.t5_max_distance = buckets;  // > buckets / 2
    s.t5_per_layer = per_layer;
    return part(CostedRun(s).cost, "parameters");
  };
  // 1000 more buckets: tables × 1000 × n_head more floats, twice (weights and checkpoint).
  CHECK(bytes(2000, false) - bytes(1000, false) == doctest::Approx(2.0 * 4 * 1000 * 4));
  CHECK(bytes(2000, true) - bytes(1000, true) == doctest::Approx(2.0 * 4 * 2 * 1000 * 4));
  // Two billion buckets: tens of gigabytes, refused by the budget before any allocation.
  TrainSpec s;
  s.pe = "t5";
  s.t5_buckets = 2000000000;
  s.t5_max_distance = 2000000000;
  const CostedRun run(s);
  CHECK(run.cost.peak_bytes > 2e9 * 4 * 7);
  CHECK_THROWS_WITH_AS(check_run_budget(run, Budget{"4G"}, false),
                       doctest::Contains("--t5-buckets"), UsageError);
}

TEST_CASE("greedy decoding's pass is counted in the evaluation's work") {
  TrainSpec s;
  s.task = "copy";
  s.l_train = 8;
  s.l_test = 16;
  s.d_model = 16;
  s.n_head = 2;
  s.d_ff = 32;
  const CostedRun told(s);
  s.test_attention.decode = "greedy";
  const CostedRun written(s);
  CHECK(told.cost.greedy_flops == 0);
  CHECK(written.cost.greedy_flops > 0);
  CHECK(written.cost.eval_flops ==
        doctest::Approx(told.cost.eval_flops + written.cost.greedy_flops));
  // Every row through every block, against the teacher-forced pass's last block at the answer
  // rows only: more work, and less than twice the whole forward.
  CHECK(written.cost.greedy_flops > told.cost.eval_flops);
  CHECK(written.cost.greedy_flops < 2 * told.cost.eval_flops);
  CHECK(written.cost.work_parts.at(1).settings.find("--decode greedy") != std::string::npos);
}
