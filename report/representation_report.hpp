#pragma once
// `lenlab representation EVAL_DIR...`: paper 004's claim, checked on lenlab's runs. Reads
// evaluations written with `lenlab eval --representation-stats` (train/representation_stats.hpp)
// and asks: does the distance of the attention outputs from those at l_train predict the excess
// loss at a length? Writes into --out:
//   points.csv          one row per (evaluation, length, depth) past or below the reference:
//                       run,line,pe,seed,length,depth,sliced_w1,js_distance,kl_divergence,
//                       excess_loss (the distances are the mean over layers)
//   representation.dat/.gp/.png/.svg  per encoding, the excess loss and the sliced W1 against
//                       length, each line the mean over its seeds (004's Figure 8)
//   report.md           Pearson's r and Spearman's ρ of each distance with the excess loss, with
//                       95% bootstrap intervals over runs: pooled, per encoding, per length across
//                       runs, per encoding and length
// The excess loss: markov's excess_ce (cross-entropy above the chain's entropy); any other token
// task's cross-entropy, a scalar task's mse, minus its value at the reference length.
// A line is the settings the evaluations do not share, the seed and a fine-tune's parent aside.
#include <filesystem>
#include <iosfwd>
#include <vector>

#include "plots/gnuplot.hpp"

namespace lenlab {

struct RepresentationReportOptions {
  std::vector<std::filesystem::path> dirs;  // `lenlab eval --representation-stats` folders
  std::filesystem::path out;
  PlotOptions plot;
  std::ostream* log = nullptr;
};

// Returns 0. UsageError, before anything is written, on a folder without a completed evaluation
// that has representation.csv, evaluations of different tasks, or --out equal to one of the
// folders. Each run is measured against its own l_train.
int run_representation_report(const RepresentationReportOptions& options);

}  // namespace lenlab
