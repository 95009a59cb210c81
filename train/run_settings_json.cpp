// TrainSpec's JSON form (train/run_settings.hpp): a run's config in its manifest, a config file's
// settings read back, and the canonical text that run ids and resumed sweeps compare.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "core/text_rule.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

nlohmann::ordered_json to_json(const TrainSpec& spec) {
  static const nlohmann::ordered_json defaults = [] {
    nlohmann::ordered_json d;
    const TrainSpec base;
    visit_spec_fields(base, [&](const Setting& row, const auto& value) { d[row.key] = value; });
    return d;
  }();
  nlohmann::ordered_json all;  // every row's value, for Setting::in_id_when
  visit_spec_fields(spec, [&](const Setting& row, const auto& value) { all[row.key] = value; });
  const auto off_default = [&](const std::string& key) { return all.at(key) != defaults.at(key); };
  // One of the row's conditions holds ("KEY" off its default, or "KEY=VALUE").
  const auto in_id_when = [&](const Setting& row) {
    if (!row.in_id_when) return false;
    const std::string conditions = row.in_id_when;
    for (size_t at = 0; at <= conditions.size();) {
      const size_t end = std::min(conditions.find(',', at), conditions.size());
      const std::string condition = conditions.substr(at, end - at);
      const size_t eq = condition.find('=');
      if (eq == std::string::npos ? off_default(condition)
                                  : all.at(condition.substr(0, eq)) == condition.substr(eq + 1))
        return true;
      at = end + 1;
    }
    return false;
  };
  nlohmann::ordered_json j;
  visit_spec_fields(spec, [&](const Setting& row, const auto& value) {
    if (std::string_view(row.key) == "init_from") return;  // the parent by id: init_parent
    if (!row.has(Setting::kInEveryId) && !off_default(row.key) && !in_id_when(row))
      return;  // see the header
    j[row.key] = value;
  });
  return j;
}

namespace {

template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  if constexpr (std::is_same_v<T, int>) return "an integer from -2147483648 to 2147483647";
  if constexpr (std::is_same_v<T, uint64_t>) return "an integer from 0 to 18446744073709551615";
  if constexpr (std::is_same_v<T, double>) return "a finite number";
}

}  // namespace

TrainSpec spec_from_json(const nlohmann::ordered_json& j, const TrainSpec& base,
                         const std::string& where) {
  if (!j.is_object()) throw UsageError(fmt::format("{}: expected a table of settings", where));
  TrainSpec spec = base;
  std::vector<std::string> keys;
  visit_spec_fields(spec, [&](const Setting& row, auto&) { keys.emplace_back(row.key); });
  // Not a structured binding: the lambda below captures key and value, which clang before 16
  // refuses for structured bindings (Debian 12's clang 14 builds the fuzz targets).
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    const nlohmann::ordered_json& value = item.value();
    bool found = false;
    visit_spec_fields(spec, [&](const Setting& row, auto& field) {
      using T = std::decay_t<decltype(field)>;
      if (key != row.key) return;
      found = true;
      bool ok = false;
      if constexpr (std::is_same_v<T, std::string>) ok = value.is_string();
      // An unsigned JSON number read as int64 wraps: 2^64 - 1 would pass as -1.
      if constexpr (std::is_same_v<T, int>)
        ok = value.is_number_unsigned()
                 ? value.template get<uint64_t>() <= INT32_MAX
                 : value.is_number_integer() && value.template get<int64_t>() >= INT32_MIN &&
                       value.template get<int64_t>() <= INT32_MAX;
      if constexpr (std::is_same_v<T, uint64_t>)
        ok = value.is_number_unsigned() ||
             (value.is_number_integer() && value.template get<int64_t>() >= 0);
      // A TOML config may write inf or nan; no setting means either.
      if constexpr (std::is_same_v<T, double>)
        ok = value.is_number() && std::isfinite(value.template get<double>());
      // A switch (a 0/1 integer given as a flag without a value) may be written true or false
      // too, as Python and TOML write a yes or no.
      if constexpr (std::is_same_v<T, int>)
        if (row.has(Setting::kSwitch) && value.is_boolean()) {
          field = value.template get<bool>() ? 1 : 0;
          return;
        }
      if (!ok)
        throw UsageError(fmt::format("{}: '{}' must be {}, got {}", where, key, type_name<T>(),
                                     shown(value.dump())));
      field = value.template get<T>();
    });
    if (!found)
      throw UsageError(fmt::format("{}: unknown setting '{}'; valid settings: {}", where, key,
                                   join_choices(keys)));
  }
  // lengths without l_test: test up to the longest of them.
  if (j.contains("lengths") && !j.contains("l_test") && !spec.lengths.empty()) {
    try {
      spec.l_test = test_lengths(spec).back();
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", where, e.what()));
    }
  }
  return spec;
}

std::string canonical_spec_text(const TrainSpec& spec) {
  return to_json(spec).dump();
}

std::string training_spec_text(const TrainSpec& spec) {
  TrainSpec trained = spec;
  trained.test_attention = TestTimeAttention{};
  return canonical_spec_text(trained);
}

}  // namespace lenlab
