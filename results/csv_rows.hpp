#pragma once
// Reading the CSV files lenlab writes: their rows under a known header, split into cells, each
// cell read as a number or an integer, every mistake a UsageError naming the file and the line.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace lenlab {

// The rows of a CSV file under `header`, split into cells, each row checked to have as many cells
// as the header (UsageError naming `where` and the line).
class CsvRows {
 public:
  CsvRows(const std::string& text, const std::string& where, const char* header, const char* what)
      : in_(text), where_(where) {
    std::string line;
    std::getline(in_, line);
    if (line != header)
      throw UsageError(fmt::format("{}: not a lenlab {} file (header '{}')", where, what, line));
    std::istringstream names(line);
    for (std::string name; std::getline(names, name, ',');) columns_.push_back(name);
    if (!line.empty() && line.back() == ',') columns_.emplace_back();  // as next() splits a row
    n_cells_ = columns_.size();
  }
  // The next row's cells; false at the end.
  bool next() {
    std::string line;
    do {
      if (!std::getline(in_, line)) return false;
      ++n_;
    } while (line.empty());
    cells_.clear();
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells_.push_back(cell);
    if (!line.empty() && line.back() == ',') cells_.emplace_back();
    if (cells_.size() != n_cells_)
      throw UsageError(
          fmt::format("{}:{}: expected {} cells, got {}", where_, n_, n_cells_, cells_.size()));
    return true;
  }
  // The whole cell must be a number; strtod also reads "inf" and "nan", how an infinite mse or a
  // missing excess is written.
  double number(size_t i) const {
    char* end = nullptr;
    const double v = std::strtod(cells_[i].c_str(), &end);
    if (cells_[i].empty() || end != cells_[i].c_str() + cells_[i].size())
      throw UsageError(fmt::format("{}:{}: '{}' is not a number", where_, n_, cells_[i]));
    return v;
  }
  // A number that must be finite: nan, inf and -inf (which strtod reads, and which lenlab never
  // writes in such a column) are refused naming the file, the line and the column, before a
  // statistic meets them (a NaN never passes a ranking's comparisons).
  double finite(size_t i) const {
    const double v = number(i);
    if (!std::isfinite(v)) throw not_finite(i, "");
    return v;
  }
  // The UsageError for cell i's non-finite value, `why` saying when the column may hold one.
  UsageError not_finite(size_t i, const std::string& why) const {
    return UsageError(fmt::format("{}:{}: column {} is '{}', not a finite number{}", where_, n_,
                                  columns_[i], cells_[i], why));
  }
  int integer(size_t i) const {
    const double v = number(i);
    if (v != std::floor(v) || std::abs(v) > 1e9)
      throw UsageError(fmt::format("{}:{}: '{}' is not an integer", where_, n_, cells_[i]));
    return static_cast<int>(v);
  }
  bool empty(size_t i) const { return cells_[i].empty(); }
  std::string line_ref() const { return fmt::format("{}:{}", where_, n_); }

 private:
  std::istringstream in_;
  std::string where_;
  std::vector<std::string> columns_;  // the header's names
  size_t n_cells_ = 0;
  int n_ = 1;
  std::vector<std::string> cells_;
};

}  // namespace lenlab
