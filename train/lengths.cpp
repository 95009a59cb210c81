#include "train/lengths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "core/error.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab {
namespace {

constexpr const char* kGrammar =
    "write lengths and ranges separated by commas, e.g. 1..50,64,128 or 64..1024:64";

// A whole decimal integer, nothing else (no sign, no spaces, no exponent); -1 when it is not one.
int64_t whole_number(const std::string& s) {
  if (s.empty() || s.size() > 18 ||
      !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::strtoll(s.c_str(), nullptr, 10);
}

}  // namespace

std::vector<int> parse_lengths(const std::string& text, const std::string& flag, int max_length,
                               size_t max_count) {
  const auto fail = [&](const std::string& what) {
    throw UsageError(
        fmt::format("{} '{}': {}; {} (each from 1 to {})", flag, text, what, kGrammar, max_length));
  };
  if (text.empty()) fail("no lengths");
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) fail("an empty item");
    const size_t dots = item.find("..");
    const auto number = [&](const std::string& s) {
      const int64_t v = whole_number(s);
      if (v < 0) fail(fmt::format("'{}' is not a whole number", s));
      if (v < 1 || v > max_length) fail(fmt::format("{} is outside 1..{}", v, max_length));
      return static_cast<int>(v);
    };
    if (dots == std::string::npos) {
      out.push_back(number(item));
    } else {
      const size_t colon = item.find(':', dots + 2);
      const int a = number(item.substr(0, dots));
      const int b = number(
          item.substr(dots + 2, colon == std::string::npos ? std::string::npos : colon - dots - 2));
      int step = 1;
      if (colon != std::string::npos) {
        const int64_t s = whole_number(item.substr(colon + 1));
        if (s < 1) fail(fmt::format("the step of '{}' must be a whole number >= 1", item));
        step = static_cast<int>(std::min<int64_t>(s, max_length));
      }
      if (b < a) fail(fmt::format("the range '{}' ends below its start", item));
      if ((static_cast<size_t>(b - a) / step + 1) + out.size() > max_count)
        fail(fmt::format("more than {} lengths", max_count));
      for (int64_t l = a; l <= b; l += step) out.push_back(static_cast<int>(l));
    }
    if (out.size() > max_count) fail(fmt::format("more than {} lengths", max_count));
    if (comma == text.size()) break;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<double> parse_depths(const std::string& text, const std::string& flag) {
  const auto fail = [&](const std::string& what) {
    throw UsageError(
        fmt::format("{} '{}': {}; write depths in [0, 1] or 'random' separated by commas, e.g. {}",
                    flag, text, what, kDefaultDepths));
  };
  if (text.empty()) fail("no depths");
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    if (item.empty()) fail("an empty item");
    if (item == "random") {
      out.push_back(kNoDepth);
    } else {
      char* end = nullptr;
      const double d = std::strtod(item.c_str(), &end);
      if (end != item.c_str() + item.size() || item.find_first_of("xXnN") != std::string::npos)
        fail(fmt::format("'{}' is not a number", item));
      if (!(d >= 0.0 && d <= 1.0)) fail(fmt::format("{} is outside [0, 1]", item));
      out.push_back(d == 0.0 ? 0.0 : d);  // -0 is 0
    }
    if (out.size() > 101) fail("more than 101 depths");
    if (comma == text.size()) break;
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string format_lengths(const std::vector<int>& lengths) {
  std::string out;
  for (size_t i = 0; i < lengths.size();) {
    size_t j = i;
    while (j + 1 < lengths.size() && lengths[j + 1] == lengths[j] + 1) ++j;
    if (!out.empty()) out += ',';
    // Two consecutive lengths read as well listed as as a range.
    out +=
        j > i + 1 ? fmt::format("{}..{}", lengths[i], lengths[j]) : fmt::format("{}", lengths[i]);
    if (j == i + 1) out += fmt::format(",{}", lengths[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace lenlab
