#pragma once
// Opening a file for reading safely: only a regular file is read, in bounded memory. A named pipe
// named as a config, a corpus or a checkpoint would otherwise block the reader for ever; a device
// (/dev/zero, /dev/urandom) would be read without end; a directory gives a confusing OS error.
// Every reader of lenlab goes through read_regular_file (read_text_file is it with a small limit).
#include <cstdint>
#include <filesystem>
#include <string>

namespace lenlab {

// Limits the callers pass: a config, a manifest, any JSON (8 MiB); a results table, a log (256
// MiB); a checkpoint or a text corpus (2 GiB: both are read whole into memory).
inline constexpr int64_t kSmallFileLimit = int64_t{8} << 20;
inline constexpr int64_t kTableFileLimit = int64_t{256} << 20;
inline constexpr int64_t kLargeFileLimit = int64_t{2} << 30;

// What a file's mode says it is, for a message: "a regular file", "a directory", "a named pipe
// (FIFO)", "a character device", "a block device", "a socket", "a symbolic link".
std::string file_type_name(unsigned mode);

// The whole of `path`, at most `max_bytes` of it. Opened with O_NONBLOCK (so a named pipe without
// a writer does not block), then fstat-ed: the descriptor is checked, not the name, so the file
// cannot be swapped between the check and the read. UsageError naming `what` (e.g. "corpus";
// "" for none) and the path for: a file that cannot be opened ("cannot read <what> <path>:
// <reason>"), anything but a regular file ("... is a named pipe (FIFO), not a regular file"), a
// file larger than max_bytes (naming its size and the limit), or one that grows past it while read.
std::string read_regular_file(const std::filesystem::path& path, int64_t max_bytes,
                              const std::string& what = "");

// UsageError unless `path`, if it exists (following a symbolic link), is a regular file or a
// directory: an output named /dev/null or a FIFO is refused before anything is written, never
// replaced by a rename. `what` names the flag or file ("--save-init"; "" for none).
void check_output_path(const std::filesystem::path& path, const std::string& what = "");

}  // namespace lenlab
