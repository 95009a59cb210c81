#include "core/text_file.hpp"

namespace lenlab {

std::string read_text_file(const std::filesystem::path& path, int64_t max_bytes) {
  return read_regular_file(path, max_bytes);
}

}  // namespace lenlab
