#include "results/eval_record.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/git_revision.hpp"
#include "core/json_input.hpp"
#include "core/text_file.hpp"
#include "core/version.hpp"
#include "train/lengths.hpp"
#include "train/representation_stats.hpp"

namespace lenlab {

nlohmann::ordered_json attention_json(const TestTimeAttention& given_flags,
                                      const AttentionSpec& applied) {
  // What attention was applied (the window resolved to tokens), then every other test-time
  // setting given (its row's key and value), measurements and the window's settings left out.
  nlohmann::ordered_json a = {{"n_global", applied.window.n_global},
                              {"n_local", applied.window.n_local},
                              {"max_distance", applied.window.max_distance},
                              {"temperature", given_flags.temperature},
                              {"temperature_scope", given_flags.temperature_scope},
                              {"rope_scaling", given_flags.rope_scaling},
                              {"rope_factor", given_flags.rope_factor}};
  const TestTimeAttention defaults;
  nlohmann::ordered_json given;
  visit_test_time_settings(given_flags,
                           [&](const Setting& row, const auto& value) { given[row.key] = value; });
  visit_test_time_settings(defaults, [&](const Setting& row, const auto& value) {
    if (!row.has(Setting::kMeasureOnly) && !row.has(Setting::kWindow) && !a.contains(row.key) &&
        given[row.key] != value)
      a[row.key] = given[row.key];
  });
  return a;
}

std::string eval_json_text(const EvalRecord& r) {
  nlohmann::ordered_json info;
  info["lenlab_version"] = version();
  info["git_revision"] = git_revision();
  info["command_line"] = r.command_line;
  info["source"] = {{"dir", std::filesystem::absolute(r.source_dir).lexically_normal().string()},
                    {"id", r.source_id},
                    {"config", to_json(r.source)}};
  info["lengths"] = format_lengths(r.lengths);
  info["eval_samples"] = r.eval_samples;
  info["eval_seed"] = r.eval_seed;
  if (!r.attention.plain()) info["attention"] = attention_json(r.attention, r.applied);
  if (!r.temperatures.searched.empty()) add_temperature_json(info["attention"], r.temperatures);
  if (r.representation_projections)
    info["representation"] = {{"reference_length", r.source.l_train},
                              {"projections", *r.representation_projections},
                              {"sequences_per_length", kRepresentationSamples},
                              {"histogram_bins", kRepresentationBins},
                              {"projection_seed", kRepresentationSeed}};
  info["threads"] = r.threads;
  info["device"] = r.device;
  info["status"] = "completed";
  info["eval_seconds"] = r.eval_seconds;
  info["wall_seconds"] = r.wall_seconds;
  info["files"] = r.files;
  return info.dump(2) + "\n";
}

EvalSource load_eval_source(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "eval.json";
  if (!std::filesystem::exists(path))
    throw UsageError(
        fmt::format("{} holds no evaluation (no eval.json); give a folder that `lenlab eval` wrote",
                    dir.string()));
  EvalSource out;
  const nlohmann::json info = parse_json_input<nlohmann::json>(read_text_file(path), path.string());
  try {
    out.run_id = info.at("source").at("id").get<std::string>();
    out.config = info.at("source").at("config");
    if (info.contains("representation"))
      out.representation_reference = info.at("representation").at("reference_length").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(
        fmt::format("{}: {}; this eval.json was not written by `lenlab eval`, or was changed",
                    path.string(), json_reason(e)));
  }
  return out;
}

}  // namespace lenlab
