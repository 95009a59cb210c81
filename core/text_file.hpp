#pragma once
#include <filesystem>
#include <string>

#include "core/regular_file.hpp"

namespace lenlab {

// The whole file as text, at most `max_bytes` (a config or JSON by default): read_regular_file,
// whose UsageError says "cannot read <path>: <reason>" for a file that cannot be opened, is not a
// regular file (a named pipe is refused at once, never waited on) or is too large.
std::string read_text_file(const std::filesystem::path& path, int64_t max_bytes = kSmallFileLimit);

}  // namespace lenlab
