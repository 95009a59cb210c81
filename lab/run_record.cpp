#include "lab/run_record.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/text_file.hpp"

namespace lenlab {

std::vector<LengthResult> parse_results_csv(const std::string& text, const std::string& where) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  if (line.rfind("length,mse,mean_prediction,mean_target,mse_reparam,n_sequences,exact", 0) != 0)
    throw UsageError(fmt::format("{}: not a lenlab results file (header '{}')", where, line));
  std::vector<LengthResult> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    LengthResult r;
    int exact = 0;
    // std::strtod reads "inf" too, which is how an infinite mse is written.
    std::istringstream fields(line);
    std::string f[9];
    int n = 0;
    while (n < 9 && std::getline(fields, f[n], ',')) ++n;
    if (n != 9) throw UsageError(fmt::format("{}: malformed row '{}'", where, line));
    try {
      r.length = std::stoi(f[0]);
      r.mse = std::strtod(f[1].c_str(), nullptr);
      r.mean_prediction = std::strtod(f[2].c_str(), nullptr);
      r.mean_target = std::strtod(f[3].c_str(), nullptr);
      r.mse_reparam = std::strtod(f[4].c_str(), nullptr);
      r.n_sequences = std::stoi(f[5]);
      exact = std::stoi(f[6]);
      r.n_clamped = std::stoi(f[7]);
      r.n_nonfinite = std::stoi(f[8]);
    } catch (const std::exception&) {
      throw UsageError(fmt::format("{}: malformed row '{}'", where, line));
    }
    r.exact = exact != 0;
    rows.push_back(r);
  }
  return rows;
}

std::optional<RunRecord> load_run(const std::filesystem::path& dir) {
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
  if (r.status == "completed")
    r.results =
        parse_results_csv(read_text_file(dir / "results.csv"), (dir / "results.csv").string());
  return r;
}

}  // namespace lenlab
