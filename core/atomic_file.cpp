#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "core/error.hpp"

namespace lenlab {
namespace fs = std::filesystem;

namespace {

// pid + a process-wide counter: two processes, or two threads of one, never pick the same name.
std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
}

std::string os_reason(int err) {
  return std::strerror(err);
}

// Writes all of `content` to `fd`, retrying short writes and EINTR. Returns 0 or an errno value.
int write_all(int fd, std::string_view content) {
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

// Best effort: makes the rename itself durable. Failure here does not lose the new content (the
// file is complete and renamed), so it is not reported.
void fsync_directory(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_file_atomic(const fs::path& path, std::string_view content) {
  const fs::path dir = path.parent_path();
  // A dot-prefixed name keeps the temporary out of `ls` and most globs while it exists.
  std::string tmp_name = ".";  // built by appending: GCC 12 warns falsely (-Wrestrict) on "." + str
  tmp_name.append(path.filename().string()).append(".tmp.").append(unique_suffix());
  const fs::path tmp = dir / tmp_name;
  auto fail = [&](const std::string& reason) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw UsageError("cannot write " + path.string() + ": " + reason);
  };

  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    // Nothing was created, but O_EXCL means an existing file of that name is not ours: only
    // report, never remove.
    throw UsageError("cannot write " + path.string() + ": " + os_reason(errno));
  }
  int err = write_all(fd, content);
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) fail(os_reason(err));

  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) fail(ec.message());
  fsync_directory(dir);
}

void ensure_writable_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UsageError("cannot create directory " + dir.string() + ": " + ec.message());
  // create_directories succeeds quietly when `dir` already exists as a regular file.
  if (!fs::is_directory(dir, ec)) {
    throw UsageError("cannot use " + dir.string() +
                     " as a directory: " + (ec ? ec.message() : os_reason(ENOTDIR)));
  }

  // Permission bits alone do not prove writability (read-only mounts, ACLs, quotas), so try it.
  const fs::path probe = dir / (".lenlab-probe." + unique_suffix());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw UsageError("directory " + dir.string() + " is not writable: " + os_reason(errno));
  }
  ::close(fd);
  if (::unlink(probe.c_str()) != 0) {
    throw UsageError("directory " + dir.string() + " is not writable: cannot remove probe file " +
                     probe.string() + ": " + os_reason(errno));
  }
}

}  // namespace lenlab
