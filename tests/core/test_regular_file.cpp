// Tests for read_regular_file and check_output_path (core/regular_file.hpp): only a regular file is
// read, in bounded memory; a named pipe is refused at once; an output that is a device or a FIFO is
// refused before anything is written.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "core/text_file.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
using namespace lenlab;
using namespace lenlab::test;

namespace {

fs::path make_fifo(const fs::path& dir) {
  const fs::path p = dir / "pipe";
  REQUIRE(::mkfifo(p.c_str(), 0666) == 0);
  return p;
}

}  // namespace

TEST_CASE("read_regular_file reads a regular file whole, its limit inclusive") {
  TempDir dir;
  const fs::path p = dir.path / "a.txt";
  write_raw(p, std::string("ab\0cd", 5));
  CHECK(read_regular_file(p, 5) == std::string("ab\0cd", 5));
  CHECK(read_text_file(p) == std::string("ab\0cd", 5));
  write_raw(p, "");
  CHECK(read_regular_file(p, 0).empty());
}

TEST_CASE("read_regular_file refuses a named pipe at once, naming the path and what it is") {
  TempDir dir;
  const fs::path fifo = make_fifo(dir.path);
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = usage_message([&] { read_regular_file(fifo, 100, "corpus"); });
  // No writer ever opens the pipe: a blocking open or read would hang here for ever.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(contains(msg, "cannot read corpus " + fifo.string()));
  CHECK(contains(msg, "a named pipe (FIFO), not a regular file"));
  CHECK(contains(usage_message([&] { read_text_file(fifo); }), "a named pipe (FIFO)"));
}

TEST_CASE("read_regular_file refuses a directory, a device and a missing file") {
  TempDir dir;
  CHECK(contains(usage_message([&] { read_regular_file(dir.path, 100); }), "a directory"));
  const std::string zero = usage_message([&] { read_regular_file("/dev/zero", 100); });
  CHECK(contains(zero, "/dev/zero: it is a character device, not a regular file"));
  const std::string missing = usage_message([&] { read_regular_file(dir.path / "no", 100); });
  CHECK(contains(missing, "cannot read " + (dir.path / "no").string() + ": "));
  CHECK(contains(missing, "No such file or directory"));
}

TEST_CASE("read_regular_file refuses a file past its limit, naming its size and the limit") {
  TempDir dir;
  const fs::path p = dir.path / "big.json";
  write_raw(p, std::string(3 << 20, 'x'));
  const std::string msg = usage_message([&] { read_regular_file(p, int64_t{2} << 20, "config"); });
  CHECK(contains(msg, "cannot read config " + p.string()));
  CHECK(contains(msg, "3145728 bytes (3 MiB)"));
  CHECK(contains(msg, "limit of 2 MiB"));
  CHECK(read_regular_file(p, int64_t{3} << 20).size() == size_t{3} << 20);
  CHECK(contains(usage_message([&] { read_regular_file(p, 10); }), "limit of 10 bytes"));
}

TEST_CASE("file_type_name names every kind of file") {
  CHECK(file_type_name(S_IFREG) == "a regular file");
  CHECK(file_type_name(S_IFDIR) == "a directory");
  CHECK(file_type_name(S_IFIFO) == "a named pipe (FIFO)");
  CHECK(file_type_name(S_IFCHR) == "a character device");
  CHECK(file_type_name(S_IFBLK) == "a block device");
  CHECK(file_type_name(S_IFSOCK) == "a socket");
  CHECK(file_type_name(S_IFLNK) == "a symbolic link");
}

TEST_CASE("an output that is a device or a FIFO is refused, never replaced by the rename") {
  TempDir dir;
  const fs::path fifo = make_fifo(dir.path);
  CHECK_NOTHROW(check_output_path(dir.path / "new.txt"));  // missing: to be created
  CHECK_NOTHROW(check_output_path(dir.path));              // a folder: the caller's business
  write_raw(dir.path / "old.txt", "x");
  CHECK_NOTHROW(check_output_path(dir.path / "old.txt"));

  const std::string at_fifo = usage_message([&] { write_file_atomic(fifo, "x"); });
  CHECK(contains(at_fifo, "cannot write " + fifo.string() + ": it is a named pipe (FIFO)"));
  CHECK(fs::is_fifo(fifo));                                           // still the pipe
  CHECK(dir.names() == std::vector<std::string>{"old.txt", "pipe"});  // no temporary left
  CHECK_THROWS_AS(AtomicFileWriter{fifo}, UsageError);

  const std::string at_null =
      usage_message([&] { ensure_writable_file("/dev/null", "--save-init"); });
  CHECK(contains(at_null, "cannot write --save-init /dev/null: it is a character device"));
  CHECK(fs::is_character_file("/dev/null"));

  // A symbolic link to a device is the device.
  fs::create_symlink("/dev/null", dir.path / "link");
  CHECK(contains(usage_message([&] { write_file_atomic(dir.path / "link", "x"); }),
                 "a character device"));
  CHECK(fs::is_symlink(dir.path / "link"));
}
