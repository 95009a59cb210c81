// Finding completed runs of one setting and averaging their per-length test error.
#include "theory/measured_runs.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace lenlab {
namespace fs = std::filesystem;
namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  return cells;
}

// The whole cell as a number ("inf" and "nan" included), or a UsageError naming the file.
double parse_number(const std::string& cell, const fs::path& file, int line) {
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (cell.empty() || end != cell.c_str() + cell.size())
    throw UsageError(fmt::format("{}:{}: '{}' is not a number", file.string(), line, cell));
  return v;
}

// (length, mse) pairs of one results.csv.
std::vector<std::pair<int, double>> read_results(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw UsageError(fmt::format("cannot read {} of a completed run", file.string()));
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split_csv_line(line);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end())
      throw UsageError(fmt::format("{} has no '{}' column", file.string(), name));
    return static_cast<size_t>(it - header.begin());
  };
  const size_t i_length = column("length"), i_mse = column("mse");
  std::vector<std::pair<int, double>> rows;
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    if (cells.size() != header.size())
      throw UsageError(fmt::format("{}:{}: expected {} cells, got {}", file.string(), n,
                                   header.size(), cells.size()));
    rows.emplace_back(static_cast<int>(parse_number(cells[i_length], file, n)),
                      parse_number(cells[i_mse], file, n));
  }
  return rows;
}

bool matches(const nlohmann::json& config, const RunFilter& f) {
  return config.value("task", "") == f.task && config.value("l_train", -1) == f.l_train &&
         config.value("reparam", "") == f.reparam &&
         config.value("reparam_shift", 0.0) == f.reparam_shift &&
         (f.pe.empty() || config.value("pe", "") == f.pe);
}

}  // namespace

MeasuredErrors average_runs(const fs::path& dir, const RunFilter& filter) {
  if (!fs::is_directory(dir))
    throw UsageError(fmt::format("--runs '{}' is not a folder", dir.string()));
  std::vector<fs::path> manifests;
  if (fs::is_regular_file(dir / "manifest.json")) manifests.push_back(dir / "manifest.json");
  for (const auto& entry :
       fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied)) {
    if (entry.is_regular_file() && entry.path().filename() == "manifest.json" &&
        entry.path().parent_path() != dir)
      manifests.push_back(entry.path());
  }
  std::sort(manifests.begin(), manifests.end());

  MeasuredErrors m;
  std::set<std::string> pes;
  std::map<int, std::pair<double, int>> sums;  // length -> (sum of mse, runs)
  for (const fs::path& path : manifests) {
    nlohmann::json manifest;
    try {
      std::ifstream in(path);
      manifest = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception&) {
      ++m.n_unreadable;
      continue;
    }
    if (!manifest.is_object() || !manifest.contains("config") || !manifest["config"].is_object()) {
      ++m.n_unreadable;
      continue;
    }
    try {
      if (manifest.value("status", "") != "completed" || !matches(manifest["config"], filter))
        continue;
    } catch (const nlohmann::json::exception&) {  // a field of an unexpected type
      ++m.n_unreadable;
      continue;
    }
    m.runs.push_back(path.parent_path());
    pes.insert(manifest["config"].value("pe", ""));
    for (const auto& [length, mse] : read_results(path.parent_path() / "results.csv")) {
      sums[length].first += mse;
      sums[length].second += 1;
    }
  }
  m.pe_values.assign(pes.begin(), pes.end());
  for (const auto& [length, sum] : sums) {
    m.lengths.push_back(length);
    m.mean_mse.push_back(sum.first / sum.second);
    m.n_runs.push_back(sum.second);
  }
  return m;
}

}  // namespace lenlab
