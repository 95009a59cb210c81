#pragma once
// Writing files so that a crash or a full disk never leaves a half-written checkpoint or report:
// readers see either the old content or the new content, never a mix.
#include <filesystem>
#include <string>
#include <string_view>

namespace lenlab {

// Writes `content` to a temporary file next to `path` (same directory, so the rename stays on one
// file system), fsyncs it, then renames it over `path`. On failure the temporary is removed and
// "cannot write <path>: <reason>" is thrown, `path` keeping its old content: a SystemFailure when
// the machine failed (disk full, quota, file size limit, I/O error), else a UsageError (no such
// folder, no permission, …).
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

// The same for a file written piece by piece, too big to build in memory first (the batch log):
// the constructor creates the temporary (so an unwritable path fails before any work), append()
// writes to it, commit() fsyncs it and renames it over `path`. Destroyed without commit() (an
// exception, a killed run's unwinding), the temporary is removed and `path` keeps its old content.
// Errors are write_file_atomic's.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void append(std::string_view content);
  void commit();

 private:
  [[noreturn]] void fail(int err, const std::string& reason);
  std::filesystem::path path_, tmp_;
  int fd_ = -1;
};

// Removes the temporaries write_file_atomic left in `dir` when its process was killed: those whose
// writer (named in the temporary's name) is a process of this machine that no longer exists, and
// any older than a day. A live writer's temporaries, on this machine or another sharing the
// folder, are left alone. Returns how many were removed.
int remove_stale_temporaries(const std::filesystem::path& dir);

// Creates `dir` (and its parents) if missing and proves it is writable by creating and removing a
// probe file, so a run fails at start-up rather than after hours of training. Throws UsageError
// naming the directory and the OS reason.
void ensure_writable_directory(const std::filesystem::path& dir);

// The same for a file about to be written (write_file_atomic, AtomicFileWriter): its folder is
// created if missing and proven writable, and `path` itself is not a folder. UsageError naming
// `what` (a flag, say) and the path otherwise.
void ensure_writable_file(const std::filesystem::path& path, const std::string& what);

}  // namespace lenlab
