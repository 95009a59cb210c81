#pragma once
// Flags that `lenlab train` and `lenlab eval` (and the sweeps' commands, in part) share: where the
// work runs, its budget, and the settings' flags, made from their rows (train/setting_rows.hpp).
#include <string>

#include "cost/budget.hpp"
#include "train/run_settings.hpp"

namespace CLI {
class App;
}

namespace lenlab {

void add_device_option(CLI::App& cmd, std::string& device);
void add_budget_options(CLI::App& cmd, Budget& b);
// Every setting of a run as a flag (`lenlab train`), or the test-time ones (`lenlab eval`; without
// the measurements, which change no result, for `lenlab generate`).
void add_spec_options(CLI::App& cmd, TrainSpec& s);
void add_test_time_options(CLI::App& cmd, TestTimeAttention& t, bool measurements = true);
// A flag or an argument given as '' is a mistake, refused naming it and what it takes: read as a
// number it would be 0 (--clip '' turned clipping off), read as a path or a name it would be the
// default (lenlab run '' ran the built-in paper config). Every subcommand, before it runs.
void refuse_empty_values(const CLI::App& cmd);

}  // namespace lenlab
