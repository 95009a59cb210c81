// The time model behind --dry-run (train/time_model.hpp): its measurement gives usable rates and
// leaves the caller's thread counts as they were; a prediction is counted work over a rate.
// Nothing here asserts how fast the machine is (speed lives in bench/).
#include <doctest/doctest.h>
#include <omp.h>
#include <Eigen/Core>

#include <cmath>

#include "train/run_cost.hpp"
#include "train/time_model.hpp"

using namespace lenlab;

TEST_CASE("the time model: rates measured on one thread, the caller's thread counts restored") {
#ifdef LENLAB_SANITIZED
  // Its half second of training and evaluation takes 43 s under the sanitizers, for nothing their
  // suite does not already run (train, evaluate): the release suite checks it.
  MESSAGE("sanitizer build: the measurement is left to the release suite");
  return;
#endif
  const int eigen_before = Eigen::nbThreads(), omp_before = omp_get_max_threads();
  Eigen::setNbThreads(2);
  omp_set_num_threads(3);
  const CpuSpeed speed = measure_cpu_speed();
  CHECK(Eigen::nbThreads() == 2);
  CHECK(omp_get_max_threads() == 3);
  Eigen::setNbThreads(eigen_before);
  omp_set_num_threads(omp_before);
  CHECK(std::isfinite(speed.train_flops));
  CHECK(speed.train_flops > 0);
  CHECK(std::isfinite(speed.eval_flops));
  CHECK(speed.eval_flops > 0);
}

TEST_CASE("the time model: a prediction is the counted work over the measured rate") {
  RunCost cost;
  cost.train_flops = 6e9;
  cost.eval_flops = 1e9;
  const CpuSpeed speed{3e9, 2e9};
  CHECK(predicted_train_seconds(cost, speed) == doctest::Approx(2.0));
  CHECK(predicted_eval_seconds(cost, speed) == doctest::Approx(0.5));
  // A second thread adds 70 %: the default model's products are too small to split perfectly.
  CHECK(predicted_train_seconds(cost, speed, 2) == doctest::Approx(2.0 / 1.7));
  CHECK(predicted_eval_seconds(cost, speed, 0) == doctest::Approx(0.5));  // at least one thread
}
