// Tests for the file-writing and reporting helpers: atomic writes, progress lines, safetensors.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "models/safetensors.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace lenlab;

namespace {

using lenlab::test::contains;

// A fresh directory per test case, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
#ifdef LENLAB_TEST_TMP
    const fs::path base = LENLAB_TEST_TMP;
#else
    const fs::path base = fs::temp_directory_path();
#endif
    static int counter = 0;
    path = base / ("test_io." + std::to_string(::getpid()) + "." + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_raw(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// A safetensors file from a header text and a data section, for malformed-file tests.
std::string raw_safetensors(const std::string& header, const std::string& data) {
  const uint64_t n = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

// The message of the UsageError that `f` throws ("" if it throws none).
template <class F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// atomic_file

TEST_CASE("write_file_atomic creates, then replaces, and leaves no temporary files") {
  TempDir dir;
  const fs::path p = dir.path / "out.txt";
  write_file_atomic(p, "first version, longer than the second");
  CHECK(read_all(p) == "first version, longer than the second");
  write_file_atomic(p, std::string("second\0bin", 10));
  CHECK(read_all(p) == std::string("second\0bin", 10));
  write_file_atomic(p, "");
  CHECK(read_all(p).empty());
  CHECK(dir.names() == std::vector<std::string>{"out.txt"});
}

TEST_CASE("write_file_atomic failures are UsageErrors naming the path, and clean up") {
  TempDir dir;
  const fs::path missing = dir.path / "no_such_dir" / "out.txt";
  const std::string msg = usage_error([&] { write_file_atomic(missing, "x"); });
  CHECK(contains(msg, "cannot write " + missing.string() + ": "));
  CHECK(contains(msg, "No such file or directory"));

  // The rename fails (a directory is in the way) after the temporary was written.
  const fs::path blocked = dir.path / "blocked";
  fs::create_directories(blocked / "inside");
  const std::string msg2 = usage_error([&] { write_file_atomic(blocked, "x"); });
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
  const std::string under = usage_error([&] { ensure_writable_directory(file / "sub"); });
  CHECK(contains(under, (file / "sub").string()));
  CHECK(contains(under, "Not a directory"));
  const std::string at = usage_error([&] { ensure_writable_directory(file); });
  CHECK(contains(at, file.string()));
  CHECK(contains(at, "Not a directory"));

  if (fs::is_regular_file("/etc/hostname")) {
    const std::string etc = usage_error([] { ensure_writable_directory("/etc/hostname/sub"); });
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

// ---------------------------------------------------------------------------------------------
// safetensors

namespace {

SafeTensors example() {
  SafeTensors st;
  const float nan_payload = std::bit_cast<float>(0x7fc12345u);
  st.tensors.push_back({"z.weight", {2, 3}, {1.5f, -0.0f, 1e-40f, nan_payload, 3.0e38f, -7.25f}});
  st.tensors.push_back({"a.bias", {3}, {std::numeric_limits<float>::infinity(), 0.1f, -2.0f}});
  st.tensors.push_back({"scalar", {}, {42.0f}});
  st.tensors.push_back({"empty", {0, 4}, {}});
  st.tensors.push_back({"ünïcode", {1, 1, 2}, {1.0f, 2.0f}});
  st.metadata = {{"format", "pt"}, {"lenlab.config", R"({"d_model": 64})"}};
  return st;
}

}  // namespace

TEST_CASE("safetensors round trip keeps names, order, shapes, bit-exact values and metadata") {
  TempDir dir;
  const fs::path p = dir.path / "model.safetensors";
  const SafeTensors st = example();
  save_safetensors(p, st);
  const SafeTensors back = load_safetensors(p);
  CHECK(back.metadata == st.metadata);
  REQUIRE(back.tensors.size() == st.tensors.size());
  for (size_t i = 0; i < st.tensors.size(); ++i) {
    CAPTURE(st.tensors[i].name);
    CHECK(back.tensors[i].name == st.tensors[i].name);
    CHECK(back.tensors[i].shape == st.tensors[i].shape);
    REQUIRE(back.tensors[i].data.size() == st.tensors[i].data.size());
    for (size_t j = 0; j < st.tensors[i].data.size(); ++j) {
      CHECK(std::bit_cast<uint32_t>(back.tensors[i].data[j]) ==
            std::bit_cast<uint32_t>(st.tensors[i].data[j]));
    }
  }
  CHECK(back.at("a.bias").shape == std::vector<int64_t>{3});
  CHECK(dir.names() == std::vector<std::string>{"model.safetensors"});

  // Saving again replaces the file.
  SafeTensors small;
  small.tensors.push_back({"only", {1}, {9.0f}});
  save_safetensors(p, small);
  const SafeTensors back2 = load_safetensors(p);
  REQUIRE(back2.tensors.size() == 1);
  CHECK(back2.tensors[0].data[0] == 9.0f);
  CHECK(back2.metadata.empty());
}

TEST_CASE("safetensors byte layout matches the specification for a hand-checked example") {
  TempDir dir;
  const fs::path p = dir.path / "tiny.safetensors";
  SafeTensors st;
  st.tensors.push_back({"a", {2}, {1.0f, -2.0f}});
  save_safetensors(p, st);
  const std::string bytes = read_all(p);
  // 54 bytes of JSON + 2 spaces of padding = 56 = 0x38; then 2 floats.
  const std::string expected_header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})"
                                      "  ";
  REQUIRE(bytes.size() == 8 + 56 + 8);
  CHECK(bytes.substr(0, 8) == std::string("\x38\0\0\0\0\0\0\0", 8));
  CHECK(bytes.substr(8, 56) == expected_header);
  CHECK(bytes.substr(64) == std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8));
  CHECK(nlohmann::json::parse(bytes.substr(8, 56))["a"]["data_offsets"][1] == 8);

  // Header length is a multiple of 8 whatever the names' lengths.
  for (int len = 1; len <= 9; ++len) {
    SafeTensors s;
    s.tensors.push_back({std::string(len, 'n'), {1}, {1.0f}});
    s.metadata["k"] = std::string(len, 'v');
    save_safetensors(p, s);
    const std::string b = read_all(p);
    uint64_t n = 0;
    std::memcpy(&n, b.data(), 8);
    CHECK(n % 8 == 0);
    CHECK(b.size() == 8 + n + 4);
    CHECK_FALSE(nlohmann::json::parse(b.substr(8, n)).is_discarded());
  }
}

TEST_CASE("save_safetensors rejects inconsistent tensors") {
  TempDir dir;
  const fs::path p = dir.path / "bad.safetensors";
  SafeTensors st;
  st.tensors.push_back({"w", {2, 3}, {1, 2, 3, 4, 5}});
  const std::string msg = usage_error([&] { save_safetensors(p, st); });
  CHECK(contains(msg, "'w'"));
  CHECK(contains(msg, "[2, 3]"));
  CHECK(contains(msg, "5 values"));

  st.tensors = {{"w", {1}, {1}}, {"w", {1}, {2}}};
  CHECK(contains(usage_error([&] { save_safetensors(p, st); }), "duplicate"));
  st.tensors = {{"__metadata__", {1}, {1}}};
  CHECK(!usage_error([&] { save_safetensors(p, st); }).empty());
  st.tensors = {{"w", {-1}, {}}};
  CHECK(contains(usage_error([&] { save_safetensors(p, st); }), "negative"));
  CHECK(dir.names().empty());
}

TEST_CASE("SafeTensors::at names the missing tensor and lists the present ones") {
  SafeTensors st;
  CHECK(contains(usage_error([&] { st.at("w"); }), "'w'"));
  st.tensors = {{"a", {1}, {1}}, {"b", {1}, {2}}};
  const std::string msg = usage_error([&] { st.at("c"); });
  CHECK(contains(msg, "'c'"));
  CHECK(contains(msg, "'a' or 'b'"));
}

TEST_CASE("load_safetensors turns every malformation into a UsageError naming the file") {
  TempDir dir;
  const fs::path p = dir.path / "m.safetensors";
  auto load_error = [&](const std::string& bytes) {
    write_raw(p, bytes);
    const std::string msg = usage_error([&] { load_safetensors(p); });
    CHECK(contains(msg, p.string()));
    CHECK(msg.find('\n') == std::string::npos);
    return msg;
  };
  const std::string f4(4, '\0');
  const std::string good = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  write_raw(p, raw_safetensors(good, f4));
  CHECK(load_safetensors(p).tensors.size() == 1);

  CHECK(contains(load_error(""), "shorter than"));
  CHECK(contains(load_error("abc"), "shorter than"));
  CHECK(contains(load_error(raw_safetensors(good, f4).substr(0, 30)), "past the end"));
  CHECK(contains(load_error(raw_safetensors(good, "")), "outside"));
  CHECK(contains(load_error(raw_safetensors("{\"w\": ", "")), "not valid JSON"));
  CHECK(contains(load_error(raw_safetensors("[1, 2]", "")), "not a JSON object"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", f4)),
      "dtype F16"));
  CHECK(contains(load_error(raw_safetensors(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", f4)),
                 "no dtype"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", f4)),
      "shape"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", f4)),
      "4 bytes of data"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", f4)),
      "outside"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", f4)),
      "data_offsets"));
  CHECK(
      contains(load_error(raw_safetensors(R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],)"
                                          R"("data_offsets":[0,4]}})",
                                          f4)),
               "shape"));
  CHECK(contains(
      load_error(raw_safetensors(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                 R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                 f4)),
      "overlaps"));
  CHECK(contains(load_error(raw_safetensors(
                     R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", f4 + f4)),
                 "gap"));
  CHECK(contains(load_error(raw_safetensors(good, f4 + f4)), "4 bytes after the last tensor"));
  CHECK(contains(load_error(raw_safetensors(R"({"__metadata__":{"k":1}})", "")), "not a string"));
  CHECK(contains(usage_error([&] { load_safetensors(dir.path / "absent.safetensors"); }),
                 "cannot read"));
}

TEST_CASE("load_safetensors never crashes on truncated or corrupted bytes") {
  TempDir dir;
  const fs::path p = dir.path / "m.safetensors";
  save_safetensors(p, example());
  const std::string bytes = read_all(p);
  // Every proper prefix is invalid (the data section no longer fits the offsets).
  for (size_t n = 0; n < bytes.size(); ++n) {
    write_raw(p, bytes.substr(0, n));
    CHECK_THROWS_AS(load_safetensors(p), UsageError);
  }
  // Flipping header bytes must either still load or give a UsageError; ASan catches bad reads.
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  int rejected = 0;
  for (size_t i = 0; i < 8 + header_len; ++i) {
    for (unsigned char c : {'\0', '9', '"', '}', '\xff'}) {
      std::string corrupt = bytes;
      corrupt[i] = static_cast<char>(c);
      write_raw(p, corrupt);
      try {
        load_safetensors(p);
      } catch (const UsageError&) {
        ++rejected;
      }
    }
  }
  CHECK(rejected > 0);
}
