#pragma once
// `lenlab run --seeds-until-decided MAX` (or the config's top-level `seeds_until_decided = MAX`):
// close calls get more seeds. After the config's seeds are trained, every method comparison is
// judged together (report/comparison_verdicts.hpp); a figure with a baseline is *undecided* while a
// line of its main comparison (every length beyond l_train: report.md's verdicts) has no
// detectable difference, or is not judged for want of a pair (no seed in common, or none where
// both runs fit their training range; not when the baseline or the method missed it in most
// seeds). Each
// undecided figure below MAX seeds gets more seeds (numbered after its largest), only its own
// lines are trained on them, and the comparisons are judged again; round after round, until no
// figure is undecided below MAX. Decided figures, figures without a baseline and figures that vary
// the seed itself (their lines are seeds: nothing to pair) keep their seeds. The grown seeds go
// into selection.json (lab/experiment/selection.hpp), so `lenlab plot` reads the folder the same.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "report/comparison_verdicts.hpp"

namespace lenlab {

// Seeds added to an undecided figure each round, once it has seeds_to_reach (below).
inline constexpr int kSeedsPerRound = 2;

// The fewest seeds whose most extreme outcome (the method better, or worse, in every seed: the
// exact two-sided p 2^(1-n)) still passes Holm's adjustment among `open_tests` tests that are not
// decided yet: the smallest n with 2^(1-n) · open_tests < 0.05 (6 for 1 test, 7 for 2 or 3).
int seeds_to_reach(size_t open_tests);

// The tests of a judgement that are not decided: lines with a paired test whose word is neither
// helps nor hurts (Holm's multiplier for the next line to be decided is at least this many).
size_t open_tests(const std::vector<Comparison>& judged);

// The seeds an undecided figure with `now` seeds runs next round: straight to seeds_to_reach (fewer
// cannot decide anything), else kSeedsPerRound more; never above max_seeds.
int next_seed_count(int now, int max_seeds, size_t open_tests);

// The figures the judgement leaves undecided (names, in the judgement's order), as above.
std::vector<std::string> undecided_figures(const std::vector<Comparison>& judged);

// `seeds` extended to n: the ones given, then the integers after the largest of them.
std::vector<uint64_t> seeds_extended(std::vector<uint64_t> seeds, size_t n);

// The selected figures (all when `figures` is empty) that more seeds can decide: those with a
// baseline that do not vary the seed.
std::vector<const FigureSpec*> growable_figures(const ExperimentConfig& config,
                                                const std::vector<std::string>& figures);

// The cap a run uses: `flag` (--seeds-until-decided; > 0 given) over the config's key (0: none).
// Refuses, naming the flag or the key: a cap below the seeds a growable selected figure already
// runs, and the flag when no selected figure has a baseline (nothing to decide).
int seeds_until_decided_cap(int flag, const std::string& config_text,
                            const std::string& config_source, const ExperimentConfig& config,
                            const std::vector<std::string>& figures,
                            const std::vector<uint64_t>& seeds);

// The runs the rounds may add at most (for --dry-run): every growable figure on max_seeds seeds,
// the runs of that plan that `planned` does not hold.
std::vector<PlannedRun> most_added_runs(ExperimentConfig config,
                                        const std::vector<std::string>& figures,
                                        const std::vector<uint64_t>& seeds, int max_seeds,
                                        const std::vector<PlannedRun>& planned);

// The rounds, on the experiment folder `out` whose config's seeds are trained (selection.json
// written): each round judges the folder, grows the undecided figures' seeds in selection.json,
// calls train(the whole plan; it trains the runs not finished in out), and says on `log` which
// figures are undecided and their seeds now; the last line says how it ended.
void add_seeds_until_decided(const std::filesystem::path& out, int max_seeds,
                             const std::function<void(const std::vector<PlannedRun>&)>& train,
                             std::ostream* log);

}  // namespace lenlab
