#pragma once
// Attention temperature alignment (../shared/papers/002_286ab809cb723ebe.txt, §4, Algorithm 1): at
// a test length past training, the softmax temperature τ whose attention is as sharp as the
// model's at its training length with τ = 1, sharpness being the mean largest attention
// probability ("pmax") or the mean attention entropy over every layer, head and query row.
// Algorithm 1 searches τ on the grid 1.0, 0.95, …, 0.5 and keeps the value whose statistic is
// closest to the training one.
#include <functional>
#include <string>
#include <vector>

#include "train/attention_stats.hpp"

namespace lenlab {

enum class AlignBy { kMaxProb, kEntropy };

// "auto-pmax" → kMaxProb, "auto-entropy" → kEntropy.
std::string align_name(AlignBy by);

// Algorithm 1's grid: 1.0, 0.95, …, 0.5.
std::vector<double> temperature_grid();

// The mean of a length's statistics over every layer and head (each layer–head mean weighs the
// same, as Algorithm 1's average over every softmax does for equal row counts).
double mean_statistic(const AttentionStats& stats, AlignBy by);

// The grid value whose statistic(τ) is nearest `target` (the larger τ on a tie: the smaller
// change to the trained model).
double closest_temperature(const std::vector<double>& grid,
                           const std::function<double(double)>& statistic, double target);

}  // namespace lenlab
