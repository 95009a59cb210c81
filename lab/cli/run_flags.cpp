#include "lab/cli/run_flags.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "core/rope_scaling.hpp"
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

// Inference-side attention (train/test_time_attention.hpp): how the trained model attends when
// it is evaluated; the same flags for `lenlab train` (its own evaluation) and `lenlab eval`.
void add_test_time_options(CLI::App& cmd, TestTimeAttention& t) {
  cmd.add_option("--n-local", t.n_local,
                 "LM-Infinite's window: each query sees only the last N keys (and the first "
                 "--n-global); 'train' = the tokens of a sequence at l_train");
  add_setting(
      cmd, "--n-global", t.n_global,
      "With --n-local: the first N keys every query also sees (the Λ-mask's global branch)");
  cmd.add_option("--distance-cap", t.distance_cap,
                 "alibi, rope: relative distances beyond D count as D; 'train' = the largest "
                 "distance seen in training");
  cmd.add_option("--rope-scaling", t.rope_scaling,
                 "rope at test time: a context extension, " + join_choices(rope_extension_names()) +
                     " (position interpolation, NTK-aware base, YaRN's ramp and logit scale, NTK "
                     "by each length)");
  cmd.add_option("--rope-factor", t.rope_factor,
                 "With --rope-scaling: its factor s, or auto = per test length, its tokens / the "
                 "training window's (dynamic-ntk: HF's factor, auto = 1)");
  cmd.add_option("--yarn-alpha", t.yarn_alpha,
                 "yarn: pairs turning fewer times than this over the training window are "
                 "interpolated (the paper's 1)");
  cmd.add_option("--yarn-beta", t.yarn_beta,
                 "yarn: pairs turning more times than this are kept (the paper's 32)");
  cmd.add_option("--temperature", t.temperature,
                 "Divide every attention logit by this (softmax temperature; 1 = as trained), or "
                 "auto-pmax / auto-entropy: per length past l_train, the temperature paper 002's "
                 "search aligns with training");
  cmd.add_option("--temperature-min", t.temperature_min,
                 "With an auto temperature: the lowest temperature the search tries (its grid runs "
                 "from 1 down to this; Algorithm 1's 0.5)");
  cmd.add_option("--temperature-step", t.temperature_step,
                 "With an auto temperature: the search grid's spacing (Algorithm 1's 0.05)");
  cmd.add_flag("--attention-stats", t.attention_stats,
               "Also write attention.csv: per length, layer and head the mean attention entropy "
               "and largest attention probability");
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
