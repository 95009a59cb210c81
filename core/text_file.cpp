#include "core/text_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace lenlab {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read " + path.string() + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace lenlab
