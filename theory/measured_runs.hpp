#pragma once
// The measured counterpart of the theory: the test error of trained transformers, averaged over
// the completed runs (lab/run/run_train.hpp) that share a setting.
#include <filesystem>
#include <string>
#include <vector>

namespace lenlab {

// Which runs to average; compared with manifest.json's "config".
struct RunFilter {
  std::string task;
  int l_train = 0;
  std::string reparam;       // as written in the config ("invsqrt", "x^-0.5", ...)
  double reparam_shift = 0;  // exact match
  std::string pe;            // empty: any positional encoding
};

struct MeasuredErrors {
  std::vector<std::filesystem::path> runs;  // matching run folders, sorted
  std::vector<std::string> pe_values;       // distinct "pe" among them, sorted
  int n_unreadable = 0;  // manifest.json files that are not a readable lenlab run (skipped)
  int n_found = 0;       // readable runs under the folder, matching or not
  int n_completed = 0;   // of those, completed
  // Per length, ascending, every length some matching run reports:
  std::vector<int> lengths;
  std::vector<double> mean_mse;  // mean over the runs reporting that length (inf if any is inf)
  std::vector<int> n_runs;       // how many runs report that length
};

// Searches dir and every folder below it for run folders (results/run_record.hpp) with status
// "completed" and matching settings, and averages their results' mse per length. A manifest.json
// that is not a readable lenlab manifest is skipped and counted in n_unreadable. Throws
// UsageError when dir is not a folder, or a matching run's results.csv is missing or malformed
// (the message names the file).
MeasuredErrors average_runs(const std::filesystem::path& dir, const RunFilter& filter);

}  // namespace lenlab
