#include "lab/cli/run_flags.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

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

void add_test_time_options(CLI::App& cmd, TestTimeAttention& t) {
  visit_test_time_settings(t, [&](const Setting& row, auto& field) { add_row(cmd, row, field); });
}

void refuse_empty_flags(const CLI::App& cmd) {
  if (cmd.count("--lengths") > 0 && cmd.get_option("--lengths")->as<std::string>().empty())
    throw UsageError(
        "--lengths '': no lengths; write lengths and ranges separated by commas, e.g. "
        "1..50,64,128");
  if (cmd.count("--depths") > 0 && cmd.get_option("--depths")->as<std::string>().empty())
    parse_depths("", "--depths");  // its message names the grammar
  for (const char* flag : {"--n-local", "--distance-cap"})
    if (cmd.count(flag) > 0 && cmd.get_option(flag)->as<std::string>().empty())
      throw UsageError(fmt::format("{} '': give 'train' or an integer >= 1", flag));
}

}  // namespace lenlab
