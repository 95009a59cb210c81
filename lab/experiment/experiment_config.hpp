#pragma once
// An experiment config (TOML): the settings of every run of a set of figures, e.g.
// configs/paper.toml for `lenlab reproduce`. Layout:
//
//   seeds = [1, 2, 3]              # every line of every figure is run once per seed
//   seeds_until_decided = 12       # optional: add seeds to undecided comparisons up to 12
//                                  #   (lab/experiment/seeds_until_decided.hpp; the flag
//                                  #   --seeds-until-decided overrides it)
//   [defaults]                     # any `lenlab train` setting, its flag with '_' for '-'
//   steps = 1000                   #   (l_train, lr, eval_samples, ...)
//   [select]                       # optional: training settings tried for every line and
//   by = "validation"              #   seed; each keeps the run whose model scores best on
//   lr = [1e-4, 3e-4, 5e-4]        #   validation sequences inside its training range (never a
//   warmup_steps = [0, 100]        #   test length; results/validation_choice.hpp). Settings:
//                                  #   the optimizer's, batch_size and steps; a figure or line
//                                  #   cannot also set them
//   [figures.1a]                   # one table per figure
//   title = "Mean prediction"
//   task = "mean"                  # settings that differ from [defaults] for this figure
//   vary = "pe"                    # the setting that differs between the figure's lines
//   values = ["nope", "learned", "alibi", "rope"]
//   plot = "length"                # optional: "length" (default), "depth" (passkey: a heatmap
//                                  #   over test length × the key's depth), "position" (markov),
//                                  #   "misalignment" (mean/length/sum/markov: each run's metric
//                                  #   at at_length against its misalignment at l_train, with
//                                  #   the correlations: paper 000's Table 1)
//   metric = "mse"                 # optional: what is drawn; default mse (scalar tasks),
//                                  #   excess_ce (markov), token_accuracy (other token tasks)
//   at_length = 50                 # plot "misalignment" only, optional: the test length of each
//                                  #   run's y; default the lines' longest; every line tests it
//   pool = ["1a", "1b"]            # plot "misalignment" only, optional: also every line of
//                                  #   these figures, labelled "1a: nope"; then vary and values
//                                  #   may be left out (and with them any run setting)
//
// A figure with vary = "seed" has one run per value (its lines are seeds), whatever `seeds` says.
// A figure with vary = "settings" has a table of settings per line, each with a label:
//   values = [{ label = "plain" }, { label = "Λ + cap", n_local = "train", n_global = 1,
//              distance_cap = "train" }]
// Lines that differ only in test-time attention (n_local, n_global, distance_cap, temperature,
// attention_stats) share one training per seed (lab/experiment/sweep.hpp).
//   baseline = "nothing"           # plot "length", optional: the label of the line the others are
//                                  #   compared to in report.md's method comparison
// A run that two lines of a misalignment figure share is one point. A pooled figure cannot
// itself pool. Selecting a pooling figure alone (`--figures`) plans its pooled figures' runs.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/figure_setup.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// Parses TOML text; every mistake (syntax, unknown key, wrong type, unknown figure field, a vary
// key that is not a setting, an empty values list, a plot or metric that some line's task does
// not have, at_length or pool on another plot, an at_length some line does not test, a pool
// naming an unknown or pooling figure) is a UsageError naming `source`, the figure and the key.
// Every figure's metric comes back resolved (never empty).
ExperimentConfig parse_experiment_config(const std::string& text, const std::string& source);
ExperimentConfig load_experiment_config(const std::string& path);

// The largest cap of --seeds-until-decided or `seeds_until_decided`: far past what a comparison
// needs (a method better in every seed is decided with 6 to 12 seeds for up to 100 open tests), so
// that a slip such as 1000000 is refused instead of planned.
inline constexpr int kMaxSeedsUntilDecided = 1000;

// The config's top-level `seeds_until_decided` (0 when absent): an integer from 1 to
// kMaxSeedsUntilDecided (parse_experiment_config refuses another value, naming the key).
int config_seeds_until_decided(const std::string& text, const std::string& source);

// --seeds N: every figure runs the experiment's seeds (1..N), its own `seeds` dropped.
void use_only_experiment_seeds(ExperimentConfig& config);

// `--figures` as given, with each group expanded: a name that is not a figure selects every figure
// named "NAME-…" (e.g. "lambda-global" → lambda-global-markov, lambda-global-passkey, in name
// order). Empty stays empty (all). A name that is neither is a UsageError listing the figures.
std::vector<std::string> select_figures(const ExperimentConfig& config,
                                        const std::vector<std::string>& names);

}  // namespace lenlab
