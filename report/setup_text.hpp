#pragma once
// How every verdict of report.md names what it was measured on: the setup a figure's runs were
// trained with and the test lengths, as multiples of l_train (the grammar of the verdicts issue:
// claim, setup, test range, n seeds, effect, p, word).
#include <string>
#include <vector>

#include "plots/figure_data.hpp"
#include "results/run_record.hpp"

namespace lenlab {

// "length with nope, 2 layers × d_model 64, 2000 steps, l_train 20" (the first spec's settings;
// `with_pe` / `with_l_train` false leave the encoding / l_train out, for figures that vary it).
std::string setup_text(const TrainSpec& spec, bool with_pe = true, bool with_l_train = true);

// Every run of a figure's lines, and the fewest and most runs one line has (its seeds per line).
struct FigureRuns {
  std::vector<const RunRecord*> runs;
  size_t fewest = 0, most = 0;
};
FigureRuns figure_runs(const FigureSummary& f);

// "3 seeds", "1 seed", "2–3 seeds" (fewest–most per line).
std::string seeds_per_line_text(const FigureRuns& r);

// The longest test length any of `runs` has a result at (0 without results).
int longest_length(const std::vector<const RunRecord*>& runs);

// "lengths 21..80 = (1×, 4×] l_train".
std::string beyond_range_text(int l_train, int longest);

// "seeds 2, 5", "seed 3", "none".
std::string seed_list(const std::vector<uint64_t>& seeds);

}  // namespace lenlab
