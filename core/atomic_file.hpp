#pragma once
// Writing files so that a crash or a full disk never leaves a half-written checkpoint or report:
// readers see either the old content or the new content, never a mix.
#include <filesystem>
#include <string_view>

namespace lenlab {

// Writes `content` to a temporary file next to `path` (same directory, so the rename stays on one
// file system), fsyncs it, then renames it over `path`. On failure the temporary is removed and a
// UsageError "cannot write <path>: <reason>" is thrown; `path` keeps its old content.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Creates `dir` (and its parents) if missing and proves it is writable by creating and removing a
// probe file, so a run fails at start-up rather than after hours of training. Throws UsageError
// naming the directory and the OS reason.
void ensure_writable_directory(const std::filesystem::path& dir);

}  // namespace lenlab
