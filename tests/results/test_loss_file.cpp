// loss.csv's writer and reader (results/loss_file.hpp): every number reads back to the same
// double, the misalignment column comes and goes with the regularizer, a bad file names itself.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "results/loss_file.hpp"

using namespace lenlab;

TEST_CASE("loss.csv reads back the very doubles it was written from, with or without misalign") {
  const std::vector<StepLog> log = {{1, 1.0 / 3, 2.718281828459045, 0.1, 0},
                                    {2, 3e-4, std::nextafter(1.0, 2.0), 1e-300, 0}};
  const std::string plain = loss_csv_text(log, MisalignRegularizer{});
  CHECK(plain.rfind("step,lr,loss,grad_norm\n1,", 0) == 0);
  const std::vector<StepLog> back = parse_loss_csv(plain, "loss.csv");
  REQUIRE(back.size() == log.size());
  for (size_t i = 0; i < log.size(); ++i) {
    CHECK(back[i].step == log[i].step);
    CHECK(back[i].lr == log[i].lr);  // exact: the shortest form that round-trips
    CHECK(back[i].loss == log[i].loss);
    CHECK(back[i].grad_norm == log[i].grad_norm);
  }

  MisalignRegularizer reg;
  reg.alpha = 0.5;
  std::vector<StepLog> with_pairs = log;
  with_pairs[0].pair_loss = 0.25;  // α·L_misalign: the file holds L_misalign = 0.5
  const std::string regularized = loss_csv_text(with_pairs, reg);
  CHECK(regularized.rfind("step,lr,loss,grad_norm,misalign\n", 0) == 0);
  CHECK(regularized.find(",0.5\n") != std::string::npos);
  CHECK(parse_loss_csv(regularized, "loss.csv").size() == 2);

  CHECK_THROWS_WITH_AS(parse_loss_csv("step,loss\n1,2\n", "run/loss.csv"),
                       doctest::Contains("run/loss.csv: not a lenlab loss file"), UsageError);
  CHECK_THROWS_WITH_AS(parse_loss_csv("step,lr,loss,grad_norm\n1,0.1,x,2\n", "run/loss.csv"),
                       doctest::Contains("run/loss.csv:2: 'x' is not a number"), UsageError);
}
