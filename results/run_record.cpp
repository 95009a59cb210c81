#include "results/run_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/text_file.hpp"
#include "core/text_rule.hpp"
#include "results/csv_rows.hpp"
#include "results/length_files.hpp"

namespace lenlab {

std::vector<LengthResult> load_results(const std::filesystem::path& dir) {
  const auto path = dir / "results.csv";
  return parse_results_csv(read_text_file(path, kTableFileLimit), path.string());
}

namespace {

// A key of a per-length table ("12": ...) as the length it names, 1..kMaxLength; a manifest that
// lenlab did not write may hold anything there.
int length_key(const std::string& key, const std::string& where) {
  int length = 0;
  const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), length);
  if (error != std::errc() || end != key.data() + key.size() || length < 1 || length > kMaxLength)
    throw UsageError(fmt::format(
        "{}: a per-length table has the key {}, which is no length from 1 to {}; this manifest "
        "was not written by lenlab, or was changed",
        where, shown(key), kMaxLength));
  return length;
}

double number_or_nan(const nlohmann::ordered_json& j) {
  return j.is_number() ? j.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// The manifest's "temperature_search" (train/inference_eval.hpp's temperature_search_json);
// entries of another shape are skipped, as the other optional manifest parts are.
void read_temperature_search(const nlohmann::ordered_json& t, const std::string& where,
                             RunRecord& r) {
  if (t.contains("at_bound") && t["at_bound"].is_object())
    for (const auto& [length, bound] : t["at_bound"].items())
      if (bound.is_string())
        r.temperature_at_bound[length_key(length, where)] = bound.get<std::string>();
  if (t.contains("chosen") && t["chosen"].is_object())
    for (const auto& [criterion, by_length] : t["chosen"].items())
      if (by_length.is_object())
        for (const auto& [length, tau] : by_length.items())
          r.temperature_chosen[criterion][length_key(length, where)] = number_or_nan(tau);
  if (!t.contains("curve") || !t["curve"].is_array()) return;
  for (const auto& p : t["curve"]) {
    if (!p.is_object() || !p.contains("length") || !p["length"].is_number_integer() ||
        !p.contains("tau") || !p["tau"].is_number())
      continue;
    TemperatureCurvePoint point;
    point.length = p["length"].get<int>();
    point.tau = p["tau"].get<double>();
    for (const auto& [name, value] : p.items())
      if (name != "length" && name != "tau") point.metrics[name] = number_or_nan(value);
    point.max_prob = point.metrics.count("attention_max_prob")
                         ? point.metrics["attention_max_prob"]
                         : std::numeric_limits<double>::quiet_NaN();
    point.entropy = point.metrics.count("attention_entropy")
                        ? point.metrics["attention_entropy"]
                        : std::numeric_limits<double>::quiet_NaN();
    r.temperature_curve.push_back(std::move(point));
  }
}

RunRecord record_from_manifest(const nlohmann::ordered_json& m, const std::filesystem::path& dir,
                               const std::string& where, bool with_results);

}  // namespace

bool run_is_finished(const std::filesystem::path& dir) {
  const std::optional<RunRecord> found = load_run(dir, false);
  return found && (found->status == "completed" || found->status == "diverged");
}

std::optional<RunRecord> load_run(const std::filesystem::path& dir, bool with_results) {
  const auto manifest_path = dir / "manifest.json";
  if (!std::filesystem::exists(manifest_path)) return std::nullopt;
  const nlohmann::ordered_json m =
      parse_json_input(read_text_file(manifest_path), manifest_path.string());
  const std::string where = manifest_path.string();
  // What the manifest claims is checked before it is used: its settings build the model the
  // weights must fit, so a manifest without them must not fall back on the defaults.
  if (!m.is_object())
    throw UsageError(fmt::format("{}: a run's manifest is a JSON object, this one is {} {}", where,
                                 m.is_array() ? "an" : "a", m.type_name()));
  if (!m.contains("config") || !m["config"].is_object())
    throw UsageError(fmt::format(
        "{}: {} ('config' holds the run's settings, which lenlab writes first); this manifest "
        "was not written by lenlab, or was changed",
        where,
        m.contains("config")
            ? fmt::format("'config' is {}, not a table of settings", m["config"].type_name())
            : std::string("no 'config' section")));
  try {
    return record_from_manifest(m, dir, where, with_results);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(
        fmt::format("{}: a field has the wrong type ({}); this manifest was not "
                    "written by lenlab, or was changed",
                    where, json_reason(e)));
  }
}

namespace {

RunRecord record_from_manifest(const nlohmann::ordered_json& m, const std::filesystem::path& dir,
                               const std::string& where, bool with_results) {
  RunRecord r;
  r.id = dir.filename().string();
  r.spec = spec_from_json(m["config"], TrainSpec{}, where);
  // Manifests from before 2026-11-29 read back as what they ran (Setting::in_id_when: since then
  // every manifest with a temperature names its scope, and every yarn its ramp's bounds): a
  // temperature divided q·k alone, and yarn was the paper's ramp.
  const nlohmann::ordered_json& config = m["config"];
  TestTimeAttention& t = r.spec.test_attention;
  if (t.temperature != TestTimeAttention{}.temperature && !config.contains("temperature_scope"))
    t.temperature_scope = "content";
  if (!config.contains("yarn_alpha")) {
    if (t.rope_scaling == "yarn") t.rope_scaling = "yarn-paper";
    if (r.spec.train_rope_scaling == "yarn") r.spec.train_rope_scaling = "yarn-paper";
  }
  r.status = m.value("status", "");
  r.final_train_loss = m.value("final_train_loss", 0.0);
  r.wall_seconds = m.value("wall_seconds", 0.0);
  r.train_seconds = m.value("train_seconds", 0.0);
  if (m.contains("corpus") && m["corpus"].is_object())
    r.corpus_hash = m["corpus"].value("hash", "");
  r.eval_seconds = m.value("eval_seconds", 0.0);
  // An int read as such: a number past int (1e300) would be undefined behaviour cast to one.
  const auto& together = m.contains("models_trained_together") ? m["models_trained_together"]
                                                               : nlohmann::ordered_json(1);
  if (!together.is_number_integer() || together.get<int64_t>() < 1 ||
      together.get<int64_t>() > 1000000)
    throw UsageError(
        fmt::format("{}: 'models_trained_together' must be an integer from 1 to 1000000, got {}",
                    where, together.dump()));
  r.models_trained_together = together.get<int>();
  if (m.contains("validation") && m["validation"].is_object() &&
      m["validation"].contains("value") && m["validation"]["value"].is_number())
    r.validation = m["validation"]["value"].get<double>();
  if (m.contains("until_fit") && m["until_fit"].is_object()) {
    const nlohmann::ordered_json& u = m["until_fit"];
    if (u.contains("reason") && u["reason"].is_string()) r.stop_reason = u["reason"];
    if (u.contains("steps_trained") && u["steps_trained"].is_number_integer() &&
        u["steps_trained"].get<int64_t>() >= 0 &&
        u["steps_trained"].get<int64_t>() <= std::numeric_limits<int>::max())
      r.steps_trained = u["steps_trained"].get<int>();
  }
  if (m.contains("misalignment") && m["misalignment"].is_object()) {
    const nlohmann::ordered_json& mis = m["misalignment"];
    auto number = [](const nlohmann::ordered_json& j, const char* key) -> std::optional<double> {
      if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
      return std::nullopt;
    };
    r.misalignment = number(mis, "value");
    r.misalignment_divergence = number(mis, "divergence");
    r.misalignment_entropy = number(mis, "entropy");
    if (mis.contains("perfect") && mis["perfect"].is_object()) {
      r.misalignment_perfect = number(mis["perfect"], "value");
      r.misalignment_perfect_divergence = number(mis["perfect"], "divergence");
    }
  }
  if (m.contains("temperature_by_length") && m["temperature_by_length"].is_object())
    for (const auto& [length, tau] : m["temperature_by_length"].items())
      if (tau.is_number()) r.temperature_by_length[length_key(length, where)] = tau.get<double>();
  if (m.contains("temperature_closed_form") && m["temperature_closed_form"].is_object())
    for (const auto& [key, into] :
         {std::pair{"proposition_1_pmax", &r.temperature_pmax_closed_form},
          std::pair{"proposition_2_entropy", &r.temperature_entropy_closed_form}})
      if (m["temperature_closed_form"].contains(key) &&
          m["temperature_closed_form"][key].is_object())
        for (const auto& [length, tau] : m["temperature_closed_form"][key].items())
          (*into)[length_key(length, where)] =
              tau.is_number() ? tau.get<double>() : std::numeric_limits<double>::quiet_NaN();
  if (m.contains("temperature_search") && m["temperature_search"].is_object())
    read_temperature_search(m["temperature_search"], where, r);
  if (with_results && r.status == "completed") {
    r.results = load_results(dir);
    const auto positions = dir / "positions.csv";
    if (std::filesystem::exists(positions))
      r.positions =
          parse_positions_csv(read_text_file(positions, kTableFileLimit), positions.string());
    const auto attention = dir / "attention.csv";
    if (std::filesystem::exists(attention))
      add_attention_csv(read_text_file(attention, kTableFileLimit), attention.string(), r.results);
    const auto distance = dir / "attention_distance.csv";
    if (std::filesystem::exists(distance))
      add_attention_distance_csv(read_text_file(distance, kTableFileLimit), distance.string(),
                                 r.results);
    const auto untrained = dir / "untrained_bias.csv";
    if (std::filesystem::exists(untrained))
      add_untrained_bias_csv(read_text_file(untrained, kTableFileLimit), untrained.string(),
                             r.results);
    const auto bias = dir / "position_bias.csv";
    if (std::filesystem::exists(bias))
      r.position_bias =
          parse_position_bias_csv(read_text_file(bias, kTableFileLimit), bias.string());
  }
  return r;
}

}  // namespace

}  // namespace lenlab
