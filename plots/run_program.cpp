#include "plots/run_program.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

extern char** environ;

namespace lenlab {
namespace fs = std::filesystem;

std::optional<fs::path> find_program(const std::string& program) {
  const auto executable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) {
    if (!executable(program)) return std::nullopt;
    return fs::absolute(program).lexically_normal();  // the child may run in another folder
  }
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find(':', start), path.size());
    const fs::path dir = end == start ? fs::path(".") : fs::path(path.substr(start, end - start));
    if (executable(dir / program)) return fs::absolute(dir / program).lexically_normal();
    start = end + 1;
  }
  return std::nullopt;
}

ProgramOutput run_program_capture(const fs::path& program, const fs::path& dir,
                                  const std::vector<std::string>& args) {
  int out_fds[2], err_fds[2];
  if (::pipe2(out_fds, O_CLOEXEC) != 0)
    throw UsageError(fmt::format("cannot run {}: {}", program.string(), std::strerror(errno)));
  if (::pipe2(err_fds, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(out_fds[0]);
    ::close(out_fds[1]);
    throw UsageError(fmt::format("cannot run {}: {}", program.string(), std::strerror(e)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_fds[1], 2);
  std::vector<std::string> words{program.string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_fds[1]);
  ::close(err_fds[1]);
  if (rc != 0) {
    ::close(out_fds[0]);
    ::close(err_fds[0]);
    throw UsageError(fmt::format("cannot run {}: {}", program.string(), std::strerror(rc)));
  }
  // Both pipes at once: a program that fills one while we block reading the other would hang.
  ProgramOutput result;
  pollfd fds[2] = {{out_fds[0], POLLIN, 0}, {err_fds[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_pipes = 2;
  char buf[4096];
  while (open_pipes > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;  // poll ignores it from now on
        --open_pipes;
      }
    }
  }
  for (const pollfd& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  while (::waitpid(pid, &result.status, 0) < 0 && errno == EINTR) {
  }
  return result;
}

std::pair<int, std::string> run_program_in(const fs::path& program, const fs::path& dir,
                                           const std::vector<std::string>& args) {
  ProgramOutput r = run_program_capture(program, dir, args);
  return {r.status, std::move(r.err)};
}

}  // namespace lenlab
