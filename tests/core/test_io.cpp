// Tests for the file-writing and reporting helpers: atomic writes and progress lines.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
using namespace lenlab;
using namespace lenlab::test;

// ---------------------------------------------------------------------------------------------
// atomic_file

TEST_CASE("write_file_atomic creates, then replaces, and leaves no temporary files") {
  TempDir dir;
  const fs::path p = dir.path / "out.txt";
  write_file_atomic(p, "first version, longer than the second");
  CHECK(read_text(p) == "first version, longer than the second");
  write_file_atomic(p, std::string("second\0bin", 10));
  CHECK(read_text(p) == std::string("second\0bin", 10));
  write_file_atomic(p, "");
  CHECK(read_text(p).empty());
  CHECK(dir.names() == std::vector<std::string>{"out.txt"});
}

TEST_CASE("write_file_atomic failures are UsageErrors naming the path, and clean up") {
  TempDir dir;
  const fs::path missing = dir.path / "no_such_dir" / "out.txt";
  const std::string msg = usage_message([&] { write_file_atomic(missing, "x"); });
  CHECK(contains(msg, "cannot write " + missing.string() + ": "));
  CHECK(contains(msg, "No such file or directory"));

  // The rename fails (a directory is in the way) after the temporary was written.
  const fs::path blocked = dir.path / "blocked";
  fs::create_directories(blocked / "inside");
  const std::string msg2 = usage_message([&] { write_file_atomic(blocked, "x"); });
  CHECK(contains(msg2, "cannot write " + blocked.string() + ": "));
  CHECK(dir.names() == std::vector<std::string>{"blocked"});
}

TEST_CASE("ensure_writable_directory creates nested directories and leaves no probe") {
  TempDir dir;
  const fs::path nested = dir.path / "a" / "b" / "c";
  ensure_writable_directory(nested);
  CHECK(fs::is_directory(nested));
  CHECK(fs::is_empty(nested));
  ensure_writable_directory(nested);  // already there: fine
  CHECK(fs::is_empty(nested));
}

TEST_CASE("ensure_writable_directory rejects paths under or at a regular file") {
  TempDir dir;
  const fs::path file = dir.path / "plain";
  write_raw(file, "x");
  const std::string under = usage_message([&] { ensure_writable_directory(file / "sub"); });
  CHECK(contains(under, (file / "sub").string()));
  CHECK(contains(under, "Not a directory"));
  const std::string at = usage_message([&] { ensure_writable_directory(file); });
  CHECK(contains(at, file.string()));
  CHECK(contains(at, "Not a directory"));

  if (fs::is_regular_file("/etc/hostname")) {
    const std::string etc = usage_message([] { ensure_writable_directory("/etc/hostname/sub"); });
    CHECK(contains(etc, "/etc/hostname/sub"));
    CHECK(etc.find('\n') == std::string::npos);
  }
}

// ---------------------------------------------------------------------------------------------
// progress

namespace {

// A clock the test moves by hand.
struct FakeClock {
  double t = 1000;
  Progress::Clock fn() {
    return [this] { return t; };
  }
};

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("progress off a terminal: one plain line per 10%, exactly 10 for 100 steps") {
  FakeClock clock;
  std::ostringstream out;
  Progress p("train", 100, out, false, clock.fn());
  for (int i = 1; i <= 100; ++i) {
    clock.t += 0.5;
    p.update(i, "loss 1.23e-03");
  }
  p.finish();
  p.finish();  // idempotent
  const std::string s = out.str();
  CHECK(s.find('\r') == std::string::npos);
  CHECK(s.find('\x1b') == std::string::npos);
  const auto lines = lines_of(s);
  REQUIRE(lines.size() == 10);
  CHECK(contains(lines[0], "train"));
  CHECK(contains(lines[0], "10/100 (10%)"));
  CHECK(contains(lines[0], "2.00/s"));
  CHECK(contains(lines[0], "ETA 45s"));
  CHECK(contains(lines[0], "loss 1.23e-03"));
  CHECK(contains(lines[9], "100/100 (100%)"));
  CHECK(contains(lines[9], "in 50s"));
  CHECK(s.back() == '\n');
}

TEST_CASE("progress off a terminal: finish reports an early stop or a new status") {
  FakeClock clock;
  std::ostringstream out;
  Progress p("eval", 1000, out, false, clock.fn());
  for (int i = 1; i <= 370; ++i) p.update(i);
  clock.t += 2;
  p.finish("converged");
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 4);  // 10%, 20%, 30%, final
  CHECK(contains(lines[3], "370/1000 (37%)"));
  CHECK(contains(lines[3], "converged"));
  CHECK(contains(lines[3], "in 2s"));

  std::ostringstream out2;
  Progress q("x", 10, out2, false, clock.fn());
  for (int i = 1; i <= 10; ++i) q.update(i, "a");
  q.finish("b");
  CHECK(lines_of(out2.str()).size() == 11);

  std::ostringstream out3;
  Progress empty("nothing", 0, out3, false, clock.fn());
  empty.update(0);
  empty.finish();
  CHECK(lines_of(out3.str()).size() == 1);
  CHECK(contains(out3.str(), "0/0"));
}

TEST_CASE("progress on a terminal: one redrawn line, throttled, with bar, rate, ETA, status") {
  FakeClock clock;
  std::ostringstream out;
  Progress p("train", 200, out, true, clock.fn());
  clock.t += 10;
  p.update(50, "loss 4.20e-01");  // first update always draws
  const std::string first = out.str();
  CHECK(first.front() == '\r');
  CHECK(contains(first, "train ["));
  CHECK(contains(first, "#####..............."));  // 25% of a 20-wide bar
  CHECK(contains(first, "50/200 (25%)"));
  CHECK(contains(first, "5.00/s"));
  CHECK(contains(first, "ETA 30s"));
  CHECK(contains(first, "loss 4.20e-01"));

  for (int i = 51; i < 200; ++i) p.update(i, "x");  // clock stands still: no redraw
  CHECK(out.str() == first);
  clock.t += 0.1;
  p.update(120);
  CHECK(out.str().size() > first.size());
  CHECK(contains(out.str().substr(first.size()), "120/200 (60%)"));
  CHECK(contains(out.str().substr(first.size()), "  x"));    // an empty status keeps the last
  p.update(200, "a much longer status than the final one");  // the last unit always draws
  p.finish("done");
  p.finish("again");
  const std::string s = out.str();
  CHECK(std::count(s.begin(), s.end(), '\r') == 4);
  CHECK(std::count(s.begin(), s.end(), '\n') == 1);
  CHECK(s.back() == '\n');
  CHECK(contains(s, "done"));
  CHECK(!contains(s, "again"));
  // The final line blanks the leftovers of the longer line drawn before it.
  const size_t last_cr = s.rfind('\r');
  const size_t previous_cr = s.rfind('\r', last_cr - 1);
  const std::string last = s.substr(last_cr, s.size() - 1 - last_cr);
  const std::string previous = s.substr(previous_cr, last_cr - previous_cr);
  CHECK(contains(last, "200/200 (100%)"));
  CHECK(contains(previous, "a much longer status"));
  CHECK(last.size() >= previous.size());
}

TEST_CASE("duration and rate formatting") {
  CHECK(format_duration(0) == "0s");
  CHECK(format_duration(59.9) == "59s");
  CHECK(format_duration(65) == "1m05s");
  CHECK(format_duration(3725) == "1h02m");
  CHECK(format_duration(100 * 3600.0) == "100h00m");
  CHECK(format_duration(-1) == "--");
  CHECK(format_duration(std::nan("")) == "--");
  CHECK(format_duration(std::numeric_limits<double>::infinity()) == "--");
  CHECK(format_rate(0.5) == "0.50/s");
  CHECK(format_rate(12.34) == "12.3/s");
  CHECK(format_rate(456) == "456/s");
  CHECK(format_rate(12345) == "12.3k/s");
  CHECK(format_rate(4.56e6) == "4.56M/s");
  CHECK(format_rate(std::nan("")) == "--/s");

  // Before any time has passed the rate and ETA are unknown, not infinite.
  FakeClock clock;
  std::ostringstream out;
  Progress p("t", 10, out, false, clock.fn());
  p.update(5);
  CHECK(contains(out.str(), "--/s ETA --"));
}

TEST_CASE("stream_is_tty is false for a regular file") {
  FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  CHECK_FALSE(Progress::stream_is_tty(f));
  std::fclose(f);
}
