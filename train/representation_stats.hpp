#pragma once
// Paper 004's measurement (§4, App. C, Tables 5–7): how far the distribution of attention-output
// rows at a test length lies from the one at the training length, per layer.
//  * The rows: each layer's attention output (the heads' weighted values, before W_o) at every
//    row of the first kRepresentationSamples test sequences of a length, through the training
//    forward; the last layer at the rows its heads read only (the others are not computed).
//    A row weighs its sequence's weight (an enumerated scalar set's probability; 1 otherwise).
//  * The measures compare two such clouds in R^d through P fixed random unit directions (Gaussian,
//    normalised, drawn from kRepresentationSeed: the same for every run of a width d):
//      sliced_w1      the mean over directions of the exact 1-D Wasserstein-1 distance between the
//                     projected samples, ∫|F − G| dx over their weighted empirical CDFs;
//      js_distance    the mean over directions of √JS (base 2, so in [0, 1]) between histograms;
//      kl_divergence  the mean over directions of KL(length ‖ reference), nats, between
//                     histograms.
//    The histograms have kRepresentationBins equal bins over the two samples' joint range, with
//    half a count added to every bin (p_b = (n·f_b + ½) / (n + B/2), n the sample's rows, f_b its
//    weighted share) so that KL is finite where one sample leaves a bin empty.
//  * reference_std: the mean over directions of the reference's standard deviation, the scale to
//    read sliced_w1 against (two models' attention outputs need not share one).
// At the reference length itself the two samples are the same rows, so every distance is 0.
#include <cstdint>
#include <string>
#include <vector>

namespace lenlab {

inline constexpr int kRepresentationSamples = 64;  // sequences per length
inline constexpr int kRepresentationBins = 32;
inline constexpr uint64_t kRepresentationSeed = 20040;
inline constexpr int kMaxRepresentationProjections = 4096;

struct RepresentationDistance {
  int layer = 0;
  int rows = 0, reference_rows = 0;
  double sliced_w1 = 0, js_distance = 0, kl_divergence = 0, reference_std = 0;
};

// The exact 1-D Wasserstein-1 distance ∫|F_a − F_b| dx between two weighted samples (each
// normalised to total weight 1). Both must be non-empty with positive total weight.
double wasserstein1(const std::vector<double>& a, const std::vector<double>& a_weights,
                    const std::vector<double>& b, const std::vector<double>& b_weights);
// Histogram estimates on two 1-D weighted samples, as above: {JS distance, KL(a ‖ b)}.
struct HistogramDistances {
  double js_distance = 0, kl_divergence = 0;
};
HistogramDistances histogram_distances(const std::vector<double>& a,
                                       const std::vector<double>& a_weights,
                                       const std::vector<double>& b,
                                       const std::vector<double>& b_weights, int bins);

// One length's rows, per layer, projected onto the P directions as they arrive.
class RepresentationSample {
 public:
  RepresentationSample(int n_layer, int d_model, int projections);
  // Rows `rows` of a layer-l output block A (row r at A + r·d_model), each weighing `weight`.
  template <class T>
  void add(int l, const T* A, const std::vector<int>& rows, double weight);
  int rows(int l) const { return static_cast<int>(weights_[l].size()); }
  // Per layer: this sample (a test length) against `reference` (the training length).
  std::vector<RepresentationDistance> distance_to(const RepresentationSample& reference) const;

 private:
  int n_layer_, d_, P_;
  std::vector<double> directions_;              // [P, d] unit rows
  std::vector<std::vector<double>> projected_;  // per layer [P][rows], direction-major
  std::vector<std::vector<double>> weights_;    // per layer [rows]
};

}  // namespace lenlab
