#pragma once
// Attention temperature alignment (../shared/papers/002_286ab809cb723ebe.txt, §4, Algorithm 1): at
// a test length past training, the softmax temperature τ whose attention is as sharp as the
// model's at its training length with τ = 1, sharpness being the mean largest attention
// probability ("pmax") or the mean attention entropy over every layer, head and query row.
// Algorithm 1 searches τ on the grid 1.0, 0.95, …, 0.5 and keeps the value whose statistic is
// closest to the training one. lenlab makes the grid a setting (its lowest τ and its step) and
// says when the chosen τ sits at one of the grid's ends, where the best match may lie outside it.
#include <functional>
#include <string>
#include <vector>

#include "train/attention_stats.hpp"

namespace lenlab {

enum class AlignBy { kMaxProb, kEntropy };

// "auto-pmax" → kMaxProb, "auto-entropy" → kEntropy.
std::string align_name(AlignBy by);

// The grid from 1 down: 1, 1 − step, 1 − 2·step, … while ≥ lowest, then `lowest` itself when the
// steps miss it (so the grid's bounds are exactly 1 and lowest). The defaults are Algorithm 1's
// 1.0, 0.95, …, 0.5. std::invalid_argument unless 0 < lowest ≤ 1, step > 0 (both finite) and
// the grid has at most kMaxTemperatureGrid values (check_temperature_grid says it to a user).
inline constexpr double kDefaultTemperatureMin = 0.5, kDefaultTemperatureStep = 0.05;
inline constexpr int kMaxTemperatureGrid = 1000;
std::vector<double> temperature_grid(double lowest = kDefaultTemperatureMin,
                                     double step = kDefaultTemperatureStep);

// "low" when tau is the grid's lowest value, "high" when it is its highest (1), else "" (a
// one-value grid: "low"). A chosen τ at a bound may only be the nearest the grid allows.
std::string grid_bound(const std::vector<double>& grid, double tau);

// The log rule (paper 002's length-scaling baseline, as in scaled attention log L_tr / log L):
// τ = log L_train / log L_test with L the tokens of a sequence; NaN unless both L > 1.
double temperature_log_rule(double L_train, double L_test);

// The mean of a length's statistics over every layer and head (each layer–head mean weighs the
// same, as Algorithm 1's average over every softmax does for equal row counts).
double mean_statistic(const AttentionStats& stats, AlignBy by);

// The grid value whose statistic(τ) is nearest `target` (the larger τ on a tie: the smaller
// change to the trained model).
double closest_temperature(const std::vector<double>& grid,
                           const std::function<double(double)>& statistic, double target);

// Paper 002's closed forms (§6, under its Assumption 1: a row's logits ~ N(0, σ²)), from the
// logits' spread σ at the training and the test length (both at τ = 1), the context lengths L
// (tokens of a sequence) and, for Proposition 1, the mean largest probability P at training.
//  * Proposition 1 (max-probability alignment): A τ² − B τ + C = 0 with A = log L_ex + log P,
//    B = log L_tr + log P + σ_tr²/2, C = σ_ex²/2. The paper keeps the larger root; but when
//    σ_tr²/2 > log(L_tr·P) the larger root is not 1 even at L_ex = L_tr and σ_ex = σ_tr (the roots
//    are then 1 and C/A), so lenlab keeps the branch (+ or − of the quadratic formula) that gives
//    τ = 1 there, which is the paper's larger root whenever σ_tr²/2 < log(L_tr·P). NaN when the
//    quadratic has no positive real root.
//  * Proposition 2 (entropy alignment): τ = σ_ex / sqrt(σ_tr² + 2 log(L_ex / L_tr)); NaN when
//    the radicand is not positive.
double temperature_pmax_closed_form(double p_max_train, double L_train, double L_test,
                                    double sigma_train, double sigma_test);
double temperature_entropy_closed_form(double L_train, double L_test, double sigma_train,
                                       double sigma_test);

}  // namespace lenlab
