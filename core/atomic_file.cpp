#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

#include "core/error.hpp"
#include "core/regular_file.hpp"

namespace lenlab {
namespace fs = std::filesystem;

namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "localhost";
  return name;
}

// host + pid + a process-wide counter: two processes (on one machine or on two sharing a folder),
// or two threads of one, never pick the same name; a leftover's writer can be told apart.
std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  return host_name() + "." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

// errno values that say the machine failed (the path was fine): a full disk or quota, a file
// size limit, an I/O error. Anything else (no such folder, no permission…) is the path's fault.
bool machine_failure(int err) {
  return err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO;
}

[[noreturn]] void throw_write_error(const fs::path& path, int err, const std::string& reason) {
  const std::string what = "cannot write " + path.string() + ": " + reason;
  if (machine_failure(err)) throw SystemFailure(what);
  throw UsageError(what);
}

std::string os_reason(int err) {
  return std::strerror(err);
}

std::string flag_path_error(const std::string& what, const fs::path& path, const std::string& why) {
  return what + " " + path.string() + ": " + why;
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

AtomicFileWriter::AtomicFileWriter(fs::path path) : path_(std::move(path)) {
  check_output_path(path_);  // a device or a FIFO is refused, never replaced by the rename
  // A dot-prefixed name keeps the temporary out of `ls` and most globs while it exists.
  std::string tmp_name = ".";  // built by appending: GCC 12 warns falsely (-Wrestrict) on "." + str
  tmp_name.append(path_.filename().string()).append(".tmp.").append(unique_suffix());
  tmp_ = path_.parent_path() / tmp_name;
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    // Nothing was created, but O_EXCL means an existing file of that name is not ours: only
    // report, never remove.
    const int err = errno;
    throw_write_error(path_, err, os_reason(err));
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ < 0) return;  // committed, or failed (the temporary is gone)
  ::close(fd_);
  std::error_code ignored;
  fs::remove(tmp_, ignored);
}

void AtomicFileWriter::fail(int err, const std::string& reason) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::error_code ignored;
  fs::remove(tmp_, ignored);
  throw_write_error(path_, err, reason);
}

void AtomicFileWriter::append(std::string_view content) {
  if (fd_ < 0) throw std::logic_error("AtomicFileWriter::append after commit or failure");
  if (const int err = write_all(fd_, content); err != 0) fail(err, os_reason(err));
}

void AtomicFileWriter::commit() {
  if (fd_ < 0) throw std::logic_error("AtomicFileWriter::commit after commit or failure");
  int err = ::fsync(fd_) != 0 ? errno : 0;
  const int fd = fd_;
  fd_ = -1;  // closed below whatever happens
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) fail(err, os_reason(err));
  std::error_code ec;
  fs::rename(tmp_, path_, ec);
  if (ec) fail(ec.value(), ec.message());
  fsync_directory(path_.parent_path());
}

void write_file_atomic(const fs::path& path, std::string_view content) {
  AtomicFileWriter file(path);
  file.append(content);
  file.commit();
}

int remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) return 0;
  const std::string host = host_name();
  const auto now = fs::file_time_type::clock::now();
  int removed = 0;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    const size_t tmp = name.rfind(".tmp.");
    if (name.empty() || name[0] != '.' || tmp == std::string::npos) continue;
    // ".<file>.tmp.<host>.<pid>.<n>", or ".<file>.tmp.<pid>.<n>" from older versions.
    const std::string suffix = name.substr(tmp + 5);
    const size_t last = suffix.rfind('.');
    if (last == std::string::npos || last == 0) continue;
    const size_t before = suffix.rfind('.', last - 1);
    const std::string pid_text =
        suffix.substr(before == std::string::npos ? 0 : before + 1,
                      last - (before == std::string::npos ? 0 : before + 1));
    const std::string writer_host = before == std::string::npos ? host : suffix.substr(0, before);
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(pid_text);
    const bool writer_gone =
        writer_host == host && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    const auto modified = fs::last_write_time(it->path(), ec);
    const bool old = !ec && now - modified > std::chrono::hours(24);
    if ((writer_gone || old) && fs::remove(it->path(), ec)) ++removed;
  }
  return removed;
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

void ensure_writable_file(const fs::path& path, const std::string& what) {
  std::error_code ec;
  if (path.empty() || !path.has_filename() || fs::is_directory(path, ec))
    throw UsageError(flag_path_error(what, path, "a file name is needed, not a folder"));
  check_output_path(path, what);
  try {
    ensure_writable_directory(path.parent_path().empty() ? fs::path(".") : path.parent_path());
  } catch (const UsageError& e) {
    throw UsageError(flag_path_error(what, path, e.what()));
  }
}

}  // namespace lenlab
