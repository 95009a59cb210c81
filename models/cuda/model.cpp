// The model on the GPU: K models of one shape as one batched computation over the model index.
#include "models/cuda/backend.hpp"
#include "models/model_impl.hpp"

namespace lenlab {

template class Model<CudaBackend>;

}  // namespace lenlab
