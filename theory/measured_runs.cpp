// Finding completed runs of one setting and averaging their per-length test error.
#include "theory/measured_runs.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "results/run_record.hpp"

namespace lenlab {
namespace fs = std::filesystem;
namespace {

bool matches(const TrainSpec& s, const RunFilter& f) {
  return s.task == f.task && s.l_train == f.l_train && s.reparam == f.reparam &&
         s.reparam_shift == f.reparam_shift && (f.pe.empty() || s.pe == f.pe);
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
    std::optional<RunRecord> run;
    try {
      run = load_run(path.parent_path(), /*with_results=*/false);
    } catch (const UsageError&) {  // not a lenlab manifest (or an unknown setting in it)
      ++m.n_unreadable;
      continue;
    }
    if (!run) continue;
    ++m.n_found;
    m.n_completed += run->status == "completed";
    if (run->status != "completed" || !matches(run->spec, filter)) continue;
    m.runs.push_back(path.parent_path());
    pes.insert(run->spec.pe);
    // A matching run with a broken results.csv is an error (naming the file), not a skip.
    for (const LengthResult& r : load_results(path.parent_path())) {
      sums[r.length].first += r.mse;
      sums[r.length].second += 1;
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
