#pragma once
// Small helpers shared by the test suites.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "tests/support/test_paths.hpp"

namespace lenlab::test {

// An empty folder LENLAB_TEST_TMP/<suite>/<name>, made anew for each test.
inline std::filesystem::path fresh_dir(const std::string& suite, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(LENLAB_TEST_TMP) / suite / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_raw(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// A fresh folder below LENLAB_TEST_TMP per object, removed with it.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::path(LENLAB_TEST_TMP) /
           ("tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  // The names in the folder, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

// Checks that `got` equals `want` to within `rel` of want's largest magnitude, elementwise (and
// that want is not all zeros, so the check cannot pass on nothing).
inline void check_close_to_largest(const std::vector<double>& got, const std::vector<double>& want,
                                   double rel) {
  REQUIRE(got.size() == want.size());
  double worst = 0, largest = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    largest = std::max(largest, std::abs(want[i]));
  }
  CHECK(largest > 0);
  CHECK(worst <= rel * largest);
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The message of the UsageError fn() throws, or "<no UsageError>".
template <class Fn>
std::string usage_message(Fn&& fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no UsageError>";
}

}  // namespace lenlab::test
