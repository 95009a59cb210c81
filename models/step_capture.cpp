#include "models/step_capture.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace lenlab {

bool parse_cuda_graphs_setting(const char* graphs, const char* sync) {
  const std::string asked = graphs ? graphs : "";
  if (asked.empty() || asked == "0") return false;
  if (asked != "1")
    throw UsageError(fmt::format(
        "unknown LENLAB_CUDA_GRAPHS '{}' (the environment variable that lets the GPU trainer "
        "replay its training steps as CUDA graphs); choose '1' (replay) or '0' (launch every "
        "operation, the default)",
        asked));
  if (sync && std::string(sync) == "1")
    throw UsageError(
        "LENLAB_CUDA_GRAPHS=1 and LENLAB_CUDA_SYNC=1 exclude each other: LENLAB_CUDA_SYNC waits "
        "for every kernel, which a captured step may not do; unset one of them");
  return true;
}

bool cuda_graphs_requested() {
  return parse_cuda_graphs_setting(std::getenv("LENLAB_CUDA_GRAPHS"),
                                   std::getenv("LENLAB_CUDA_SYNC"));
}

}  // namespace lenlab
