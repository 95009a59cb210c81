#include "results/run_record.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/text_file.hpp"

namespace lenlab {

namespace {
constexpr const char* kResultsHeader =
    "length,mse,mean_prediction,mean_target,mse_reparam,n_sequences,exact,n_clamped,n_nonfinite";
}  // namespace

std::string results_csv_text(const std::vector<LengthResult>& rows) {
  std::string out = std::string(kResultsHeader) + "\n";
  for (const LengthResult& r : rows)
    out += fmt::format("{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{}\n", r.length, r.mse,
                       r.mean_prediction, r.mean_target, r.mse_reparam, r.n_sequences,
                       r.exact ? 1 : 0, r.n_clamped, r.n_nonfinite);
  return out;
}

std::vector<LengthResult> parse_results_csv(const std::string& text, const std::string& where) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  if (line != kResultsHeader)
    throw UsageError(fmt::format("{}: not a lenlab results file (header '{}')", where, line));
  std::vector<LengthResult> rows;
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (cells.size() != 9)
      throw UsageError(fmt::format("{}:{}: expected 9 cells, got {}", where, n, cells.size()));
    // The whole cell must be a number; strtod also reads "inf", how an infinite mse is written.
    auto number = [&](size_t i) {
      char* end = nullptr;
      const double v = std::strtod(cells[i].c_str(), &end);
      if (cells[i].empty() || end != cells[i].c_str() + cells[i].size())
        throw UsageError(fmt::format("{}:{}: '{}' is not a number", where, n, cells[i]));
      return v;
    };
    auto integer = [&](size_t i) {
      const double v = number(i);
      if (v != std::floor(v) || std::abs(v) > 1e9)
        throw UsageError(fmt::format("{}:{}: '{}' is not an integer", where, n, cells[i]));
      return static_cast<int>(v);
    };
    LengthResult r;
    r.length = integer(0);
    r.mse = number(1);
    r.mean_prediction = number(2);
    r.mean_target = number(3);
    r.mse_reparam = number(4);
    r.n_sequences = integer(5);
    r.exact = integer(6) != 0;
    r.n_clamped = integer(7);
    r.n_nonfinite = integer(8);
    if (!rows.empty() && r.length <= rows.back().length)
      throw UsageError(fmt::format("{}:{}: length {} after length {}: lengths must ascend", where,
                                   n, r.length, rows.back().length));
    rows.push_back(r);
  }
  return rows;
}

std::vector<LengthResult> load_results(const std::filesystem::path& dir) {
  const auto path = dir / "results.csv";
  return parse_results_csv(read_text_file(path), path.string());
}

std::optional<RunRecord> load_run(const std::filesystem::path& dir, bool with_results) {
  const auto manifest_path = dir / "manifest.json";
  if (!std::filesystem::exists(manifest_path)) return std::nullopt;
  nlohmann::ordered_json m;
  try {
    m = nlohmann::ordered_json::parse(read_text_file(manifest_path));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON ({})", manifest_path.string(), e.what()));
  }
  RunRecord r;
  r.id = dir.filename().string();
  r.spec = spec_from_json(m.value("config", nlohmann::ordered_json::object()), TrainSpec{},
                          manifest_path.string());
  r.status = m.value("status", "");
  r.final_train_loss = m.value("final_train_loss", 0.0);
  r.wall_seconds = m.value("wall_seconds", 0.0);
  r.train_seconds = m.value("train_seconds", 0.0);
  r.eval_seconds = m.value("eval_seconds", 0.0);
  if (with_results && r.status == "completed") r.results = load_results(dir);
  return r;
}

}  // namespace lenlab
