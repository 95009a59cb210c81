#include "core/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace lenlab {

namespace {

std::string named(const std::string& what, const std::filesystem::path& path) {
  return what.empty() ? path.string() : what + " " + path.string();
}

std::string size_text(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Closes the descriptor on every path out of read_regular_file.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string file_type_name(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a named pipe (FIFO)";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
  }
  return "a special file";
}

std::string read_regular_file(const std::filesystem::path& path, int64_t max_bytes,
                              const std::string& what) {
  const std::string name = named(what, path);
  const Descriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) throw UsageError("cannot read " + name + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0)
    throw UsageError("cannot read " + name + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw UsageError("cannot read " + name + ": it is " + file_type_name(st.st_mode) +
                     ", not a regular file");
  auto too_large = [&](int64_t size) {
    return UsageError("cannot read " + name + ": it holds " + std::to_string(size) + " bytes (" +
                      size_text(size) + "), past the limit of " + size_text(max_bytes) +
                      " for this file");
  };
  if (st.st_size > max_bytes) throw too_large(st.st_size);
  // Read up to one byte past the limit: a file that grew since fstat is caught, not truncated.
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw UsageError("cannot read " + name + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > max_bytes)
      throw too_large(static_cast<int64_t>(text.size()));
  }
  return text;
}

void check_output_path(const std::filesystem::path& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // missing (or unreachable): the writer reports it
  if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return;
  throw UsageError("cannot write " + named(what, path) + ": it is " + file_type_name(st.st_mode) +
                   ", not a regular file; lenlab writes a new file and renames it into place, "
                   "which would replace it: choose a file path");
}

}  // namespace lenlab
