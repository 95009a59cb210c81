// Experiment 01, the baseline: Eigen's general product on row-major maps, as models/cpu/linear.hpp
// did before these experiments.
#include "bench/small_gemm/common.hpp"

using namespace small_gemm;
using Rows = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Map = Eigen::Map<Rows>;
using CMap = Eigen::Map<const Rows>;

int main() {
  Eigen::setNbThreads(1);
  return run({"01 Eigen general product",
              [](float* y, const float* x, const float* w, int N, int C, int OC) {
                Map(y, N, OC).noalias() = CMap(x, N, C) * CMap(w, C, OC);
              },
              [](float* dx, const float* dy, const float* w, int N, int C, int OC) {
                Map(dx, N, C).noalias() += CMap(dy, N, OC) * CMap(w, C, OC).transpose();
              },
              [](float* dw, const float* x, const float* dy, int N, int C, int OC) {
                Map(dw, C, OC).noalias() += CMap(x, N, C).transpose() * CMap(dy, N, OC);
              }});
}
