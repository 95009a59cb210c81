#pragma once
#include <filesystem>
#include <string>

namespace lenlab {

// The whole file as text; a UsageError "cannot read <path>: <reason>" if it cannot be opened.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace lenlab
