#include "lab/cli/run_flags.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "lab/cli/cli_options.hpp"
#include "lab/run/device.hpp"
#include "train/lengths.hpp"

namespace lenlab {

void add_device_option(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device,
                 "Where to train: auto (a GPU when this build has CUDA and one is present, else "
                 "the CPU), cpu or cuda")
      ->check(CLI::IsMember(device_names()));
}

// Limits checked against the estimated memory and time before any work starts (cost/budget.hpp).
void add_budget_options(CLI::App& cmd, Budget& b) {
  cmd.add_option("--max-memory", b.max_memory,
                 "Refuse work estimated to need more memory than this, e.g. 4G or 512M "
                 "(default: the memory this machine has available)");
  cmd.add_option("--max-time", b.max_time,
                 "Refuse work estimated to take longer than this, e.g. 30m, 12h, 3d");
}

namespace {

// A setting's row as a flag: its name, help and range (core/setting.hpp); an integer switch as a
// flag without a value. The lab's own rows (init_parent) have none.
template <class Field>
void add_row(CLI::App& cmd, const Setting& row, Field& field) {
  if (row.has(Setting::kInternal)) return;
  if (row.has(Setting::kSwitch))
    cmd.add_flag(row.flag_name(), field, row.help_text());
  else
    add_setting(cmd, row.flag_name(), field, row.help_text(), row.min);
}

}  // namespace

void add_spec_options(CLI::App& cmd, TrainSpec& s) {
  visit_spec_fields(s, [&](const Setting& row, auto& field) { add_row(cmd, row, field); });
}

void add_test_time_options(CLI::App& cmd, TestTimeAttention& t, bool measurements) {
  visit_test_time_settings(t, [&](const Setting& row, auto& field) {
    if (measurements || !row.has(Setting::kMeasureOnly)) add_row(cmd, row, field);
  });
}

namespace {

// What an empty value of `opt` should have been: the grammar of the flags that have one, else its
// type's words.
std::string instead_of_empty(const CLI::Option& opt, const std::string& name,
                             const std::string& command) {
  if (name == "--lengths")
    return "no lengths; write lengths and ranges separated by commas, e.g. 1..50,64,128";
  if (name == "--depths") parse_depths("", "--depths");  // its message names the grammar
  if (name == "--n-local" || name == "--distance-cap") return "give 'train' or an integer >= 1";
  if (!opt.nonpositional()) {  // "The experiment config (TOML)": give the experiment config
    std::string what = opt.get_description();
    if (!what.empty())
      what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
    return "an empty argument; give " + what;
  }
  const std::string type = opt.get_type_name();
  const bool number =
      type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0 || type.rfind("FLOAT", 0) == 0;
  std::string hint =
      number ? "an empty value; give a number"
             : fmt::format("an empty value; give {} (see lenlab {} --help)",
                           opt.get_type_name() == "TEXT" ? "a value" : "values", command);
  // A list's default ("[]") is no value to name.
  const std::string fallback = opt.get_default_str() == "[]" ? "" : opt.get_default_str();
  if (!opt.get_required())
    hint += fallback.empty() ? fmt::format(", or leave {} out", name)
                             : fmt::format(", or leave {} out for its default {}", name, fallback);
  return hint;
}

}  // namespace

void refuse_empty_values(const CLI::App& cmd) {
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->count() == 0 || opt->get_expected_min() == 0) continue;  // not given, or a switch
    const std::vector<std::string>& given = opt->results();
    if (std::none_of(given.begin(), given.end(), [](const std::string& v) { return v.empty(); }))
      continue;
    const std::string name = opt->nonpositional() ? opt->get_lnames().front() : opt->get_name();
    const std::string name_shown = opt->nonpositional() ? "--" + name : name;
    throw UsageError(
        fmt::format("{} '': {}", name_shown, instead_of_empty(*opt, name_shown, cmd.get_name())));
  }
}

}  // namespace lenlab
