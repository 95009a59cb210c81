// The CPU model: float for training, double for gradient checks.
#include "models/cpu/backend.hpp"
#include "models/model_impl.hpp"

namespace lenlab {

template class Model<CpuBackend<float>>;
template class Model<CpuBackend<double>>;

}  // namespace lenlab
