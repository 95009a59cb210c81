// Paper 004's measurement (train/representation_stats.hpp): the 1-D distances against brute force,
// the sliced sample against its 1-D definition, the attention outputs read back per model, and the
// whole path (evaluate → representation.csv) on untrained models and through `lenlab eval`.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "results/length_files.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"
#include "tests/support/small_model.hpp"
#include "train/evaluate.hpp"
#include "train/representation_stats.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

std::vector<double> normal_sample(int n, double mean, double sd, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(mean, sd);
  std::vector<double> x(n);
  for (double& v : x) v = d(rng);
  return x;
}

// W1 between two equal-size, equally weighted samples: the mean gap of their sorted values.
double sorted_gap(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::abs(a[i] - b[i]);
  return s / static_cast<double>(a.size());
}

std::vector<double> repeat_each(const std::vector<double>& x, int times) {
  std::vector<double> out;
  for (double v : x) out.insert(out.end(), times, v);
  return out;
}

}  // namespace

TEST_CASE("wasserstein1: sorted gaps, unequal sizes by replication, weights as repeats, shifts") {
  const std::vector<double> a = normal_sample(12, 0, 1, 1), b = normal_sample(8, 0.7, 2, 2);
  const std::vector<double> ones_a(a.size(), 1.0), ones_b(b.size(), 1.0);
  // Equal sizes: the sorted gap.
  const std::vector<double> b12 = normal_sample(12, 0.7, 2, 3);
  CHECK(wasserstein1(a, ones_a, b12, ones_a) == doctest::Approx(sorted_gap(a, b12)).epsilon(1e-12));
  // 12 against 8: each replicated to 24 points.
  CHECK(wasserstein1(a, ones_a, b, ones_b) ==
        doctest::Approx(sorted_gap(repeat_each(a, 2), repeat_each(b, 3))).epsilon(1e-12));
  // A weight of 3 is the point three times; the scale of the weights does not matter.
  std::vector<double> w(a.size(), 0.5), a3 = a;
  w[4] = 1.5;
  a3.insert(a3.end(), 2, a[4]);
  CHECK(wasserstein1(a, w, b, ones_b) ==
        doctest::Approx(wasserstein1(a3, std::vector<double>(a3.size(), 1.0), b, ones_b))
            .epsilon(1e-12));
  // A shifted copy is as far as the shift; a sample is 0 from itself.
  std::vector<double> shifted = a;
  for (double& v : shifted) v += 0.25;
  CHECK(wasserstein1(a, ones_a, shifted, ones_a) == doctest::Approx(0.25).epsilon(1e-12));
  CHECK(wasserstein1(a, ones_a, a, ones_a) == 0.0);
  CHECK_THROWS_AS(wasserstein1({}, {}, b, ones_b), std::invalid_argument);
}

TEST_CASE("histogram distances: the smoothed histograms' JS distance and KL, written out") {
  // Two bins over [0, 1]: a has 2 of 3 rows in bin 0, b 1 of 3.
  const std::vector<double> a = {0, 0, 1}, b = {0, 1, 1}, w(3, 1.0);
  const double p0 = (3 * (2.0 / 3) + 0.5) / (3 + 1), q0 = (3 * (1.0 / 3) + 0.5) / (3 + 1);
  const double p[2] = {p0, 1 - p0}, q[2] = {q0, 1 - q0};
  double kl = 0, js = 0;
  for (int i = 0; i < 2; ++i) {
    const double m = (p[i] + q[i]) / 2;
    kl += p[i] * std::log(p[i] / q[i]);
    js += 0.5 * p[i] * std::log2(p[i] / m) + 0.5 * q[i] * std::log2(q[i] / m);
  }
  const HistogramDistances h = histogram_distances(a, w, b, w, 2);
  CHECK(h.kl_divergence == doctest::Approx(kl).epsilon(1e-12));
  CHECK(h.js_distance == doctest::Approx(std::sqrt(js)).epsilon(1e-12));
  const HistogramDistances same = histogram_distances(a, w, a, w, 2);
  CHECK(same.kl_divergence == 0.0);
  CHECK(same.js_distance == 0.0);
  // Far apart: JS distance approaches 1 from below, KL grows.
  const std::vector<double> x = normal_sample(400, 0, 1, 4), y = normal_sample(400, 50, 1, 5);
  const std::vector<double> wx(400, 1.0);
  const HistogramDistances far = histogram_distances(x, wx, y, wx, 32);
  CHECK(far.js_distance > 0.95);
  CHECK(far.js_distance <= 1.0);
  CHECK(far.kl_divergence > 3.0);
}

TEST_CASE("a sliced sample in one dimension is the exact 1-D measurement, per layer") {
  // d = 1: every direction is ±1, so the sliced W1 is the 1-D W1 of the values themselves.
  const std::vector<double> x = normal_sample(30, 0, 1, 6), y = normal_sample(20, 1, 0.5, 7);
  RepresentationSample at_length(2, 1, 5), reference(2, 1, 5);
  std::vector<int> rows_x(x.size()), rows_y(y.size());
  std::iota(rows_x.begin(), rows_x.end(), 0);
  std::iota(rows_y.begin(), rows_y.end(), 0);
  // Layer 0 gets the samples in two additions (the rows accumulate); layer 1 nothing.
  const std::vector<int> first(rows_x.begin(), rows_x.begin() + 11);
  std::vector<int> rest(rows_x.begin() + 11, rows_x.end());
  at_length.add(0, x.data(), first, 1.0);
  at_length.add(0, x.data(), rest, 1.0);
  reference.add(0, y.data(), rows_y, 2.0);
  const std::vector<RepresentationDistance> d = at_length.distance_to(reference);
  REQUIRE(d.size() == 1);  // layer 1 has no rows: left out
  CHECK(d[0].layer == 0);
  CHECK(d[0].rows == 30);
  CHECK(d[0].reference_rows == 20);
  const std::vector<double> wx(x.size(), 1.0), wy(y.size(), 1.0);
  CHECK(d[0].sliced_w1 == doctest::Approx(wasserstein1(x, wx, y, wy)).epsilon(1e-12));
  const HistogramDistances h = histogram_distances(x, wx, y, wy, kRepresentationBins);
  const std::vector<double> neg_x = [&] {
    std::vector<double> v = x;
    for (double& e : v) e = -e;
    return v;
  }();
  const std::vector<double> neg_y = [&] {
    std::vector<double> v = y;
    for (double& e : v) e = -e;
    return v;
  }();
  // A direction −1 mirrors the histogram's bins: the same within rounding at the edges.
  const HistogramDistances hn = histogram_distances(neg_x, wx, neg_y, wy, kRepresentationBins);
  CHECK(d[0].kl_divergence >= std::min(h.kl_divergence, hn.kl_divergence) - 1e-12);
  CHECK(d[0].kl_divergence <= std::max(h.kl_divergence, hn.kl_divergence) + 1e-12);
  double mean = 0, var = 0;
  for (double v : y) mean += v / y.size();
  for (double v : y) var += (v - mean) * (v - mean) / y.size();
  CHECK(d[0].reference_std == doctest::Approx(std::sqrt(var)).epsilon(1e-12));
  const std::vector<RepresentationDistance> self = reference.distance_to(reference);
  CHECK(self[0].sliced_w1 == 0.0);
  CHECK(self[0].js_distance == 0.0);
  CHECK(self[0].kl_divergence == 0.0);
  CHECK_THROWS_AS(RepresentationSample(2, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(at_length.distance_to(RepresentationSample(2, 1, 6)), std::invalid_argument);
}

TEST_CASE("attention outputs read back: model k of K is model k alone, at every layer") {
  const ModelConfig c = small_config(PositionalEncoding::kRope);
  Batch b0, b1;
  append_sequence(b0, {kBos, 1, 0, 1, kEos}, 0.5);
  append_sequence(b1, {kBos, 0, 0, kEos}, 0.0);
  append_sequence(b1, {kBos, 1, 1, 0, 1, 1, kEos}, 0.8);  // read rows 3 and 10
  Transformer<double> both(c, 2), alone(c);
  both.init(0, 11);
  both.init(1, 12);
  alone.init(12);
  PackedBatch<CpuBackend<double>> packed_both, packed_alone;
  packed_both.pack({&b0, &b1}, c);
  packed_alone.pack({&b1}, c);
  both.forward(packed_both);
  alone.forward(packed_alone);
  for (int l = 0; l < c.n_layer; ++l) {
    CAPTURE(l);
    const std::vector<double> A = both.download_attention_output(packed_both, l);
    const std::vector<double> B1 = alone.download_attention_output(packed_alone, l);
    const size_t N = packed_both.rows, d = c.d_model;
    REQUIRE(A.size() == 2 * N * d);
    const bool last = l == c.n_layer - 1;
    for (int r = 0; r < b1.n_tokens(); ++r) {
      if (last && r != 3 && r != 10) continue;  // the last layer: the read rows only
      for (size_t i = 0; i < d; ++i) CHECK(A[(N + r) * d + i] == doctest::Approx(B1[r * d + i]));
    }
  }
  CHECK_THROWS_AS(both.download_attention_output(packed_both, c.n_layer), std::invalid_argument);
}

TEST_CASE("evaluate's representation measurement: rows per length and layer, zero at l_train") {
  for (const char* task : {"mean", "markov"}) {
    CAPTURE(task);
    TrainSpec spec;
    spec.task = task;
    spec.pe = "rope";
    spec.l_train = 4;
    spec.l_test = 7;
    spec.eval_samples = 12;
    spec.d_model = 16;
    spec.n_head = 2;
    spec.d_ff = 32;
    const ResolvedSpec resolved = resolve(spec);
    Transformer<float> model(resolved.model);
    model.init(1);
    EvalJob job = eval_job(resolved, spec);
    const std::vector<LengthResult> plain = evaluate(model, {job})[0];
    job.representation_projections = 16;
    job.representation_reference = spec.l_train;
    const std::vector<LengthResult> measured = evaluate(model, {job})[0];
    REQUIRE(measured.size() == plain.size());
    for (size_t i = 0; i < measured.size(); ++i) {
      const LengthResult& r = measured[i];
      CAPTURE(r.length);
      // The measurement changes no result.
      CHECK(r.mse == plain[i].mse);
      CHECK(r.cross_entropy == plain[i].cross_entropy);
      CHECK(plain[i].representation.empty());
      REQUIRE(r.representation.size() == 2);
      const int tokens = r.token ? r.length + 1 : r.length + 2;  // markov: BOS and the symbols
      const int read = r.token ? r.n_answer_tokens / r.n_sequences : 1;
      const int n = std::min(r.n_sequences, kRepresentationSamples);
      CHECK(r.representation[0].rows == n * tokens);
      CHECK(r.representation[1].rows == n * read);
      for (const RepresentationDistance& d : r.representation) {
        CAPTURE(d.layer);
        CHECK(d.reference_std > 0);
        if (r.length == spec.l_train) {
          CHECK(d.sliced_w1 == 0.0);
          CHECK(d.js_distance == 0.0);
          CHECK(d.kl_divergence == 0.0);
        } else {
          CHECK(d.sliced_w1 > 0);
          CHECK(d.js_distance > 0);
        }
      }
    }
  }
}

TEST_CASE("lenlab eval --representation-stats writes representation.csv, results unchanged") {
  const fs::path base = run_dir("representation-stats");
  REQUIRE(run_cli(tiny_args(base / "run")).rc == 0);
  const CliResult plain =
      run_cli({"eval", (base / "run").string(), "--out", (base / "a").string()});
  const CliResult with = run_cli({"eval", (base / "run").string(), "--out", (base / "b").string(),
                                  "--representation-stats", "--representation-projections", "8"});
  REQUIRE_MESSAGE(plain.rc == 0, plain.err);
  REQUIRE_MESSAGE(with.rc == 0, with.err);
  CHECK(read_text(base / "a" / "results.csv") == read_text(base / "b" / "results.csv"));
  CHECK_FALSE(fs::exists(base / "a" / "representation.csv"));
  const auto rows = read_csv(base / "b" / "representation.csv");
  REQUIRE(rows.size() == static_cast<size_t>(kTinyLTest) * 2);  // lengths × layers
  for (const auto& row : rows) {
    const int l = std::stoi(row.at("length"));
    if (l == kTinyLTrain) CHECK(std::stod(row.at("sliced_w1")) == 0.0);
    CHECK(std::stod(row.at("js_distance")) <= 1.0);
  }
  const std::string info = read_text(base / "b" / "eval.json");
  CHECK(info.find("\"projections\": 8") != std::string::npos);
  CHECK(info.find("representation.csv") != std::string::npos);
  // The directions' count needs the measurement, and a count in range.
  check_one_error_line(run_cli({"eval", (base / "run").string(), "--out", (base / "c").string(),
                                "--representation-projections", "8"}));
  check_one_error_line(run_cli({"eval", (base / "run").string(), "--out", (base / "c").string(),
                                "--representation-stats", "--representation-projections", "0"}));
  CHECK_FALSE(fs::exists(base / "c" / "eval.json"));
}

TEST_CASE("lenlab representation: points, coefficients and a figure from several evaluations") {
  const fs::path base = run_dir("representation-report");
  std::vector<std::string> evals = {"representation"};
  for (const char* pe : {"nope", "rope"})
    for (const char* seed : {"1", "2"}) {
      const std::string name = std::string(pe) + "-" + seed;
      std::vector<std::string> args = tiny_args(base / "runs" / name);
      args.insert(args.end(), {"--pe", pe, "--seed", seed});
      REQUIRE(run_cli(args).rc == 0);
      const CliResult e = run_cli({"eval", (base / "runs" / name).string(), "--out",
                                   (base / "evals" / name).string(), "--representation-stats",
                                   "--representation-projections", "8"});
      REQUIRE_MESSAGE(e.rc == 0, e.err);
      evals.push_back((base / "evals" / name).string());
    }
  std::vector<std::string> args = evals;
  args.insert(args.end(), {"--out", (base / "report").string()});
  const CliResult r = run_cli(args);
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  // One point per evaluation and length but l_train; the excess is the mse above l_train's.
  const auto points = read_csv(base / "report" / "points.csv");
  CHECK(points.size() == 4u * (kTinyLTest - 1));
  std::vector<double> w1, excess;
  for (const auto& p : points) {
    CHECK(std::stoi(p.at("length")) != kTinyLTrain);
    CHECK(p.at("line").empty());  // the runs differ only in encoding and seed
    w1.push_back(std::stod(p.at("sliced_w1")));
    excess.push_back(std::stod(p.at("excess_loss")));
  }
  const auto results = read_csv(base / "evals" / "rope-2" / "results.csv");
  double mse_train = 0, mse_last = 0;
  for (const auto& row : results) {
    if (std::stoi(row.at("length")) == kTinyLTrain) mse_train = std::stod(row.at("mse"));
    if (std::stoi(row.at("length")) == kTinyLTest) mse_last = std::stod(row.at("mse"));
  }
  CHECK(std::stod(points.back().at("excess_loss")) ==
        doctest::Approx(mse_last - mse_train).epsilon(1e-6));
  // The pooled Pearson r in report.md is the points' own.
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
  const double n = static_cast<double>(w1.size());
  for (size_t i = 0; i < w1.size(); ++i) mx += w1[i] / n, my += excess[i] / n;
  for (size_t i = 0; i < w1.size(); ++i) {
    sxy += (w1[i] - mx) * (excess[i] - my);
    sxx += (w1[i] - mx) * (w1[i] - mx);
    syy += (excess[i] - my) * (excess[i] - my);
  }
  const std::string md = read_text(base / "report" / "report.md");
  CHECK(md.find(fmt::format("| all | 28 | {:+.2f}", sxy / std::sqrt(sxx * syy))) !=
        std::string::npos);
  CHECK(md.find("| nope | 14 |") != std::string::npos);
  CHECK(md.find("| length 8 | 4 |") != std::string::npos);
  // One key for the figure, in its own row below the panels: each line named once per drawing
  // (PNG, then SVG), no panel titled (a key inside a half-width panel hid curves).
  const std::string gp = read_text(base / "report" / "representation.gp");
  for (const char* key : {"title 'nope'", "title 'rope'"}) {
    size_t count = 0;
    for (size_t at = gp.find(key); at != std::string::npos; at = gp.find(key, at + 1)) ++count;
    CHECK_MESSAGE(count == 2, key);
    CHECK_MESSAGE(gp.find(key) > gp.find("set key center center"), key);  // in the key's row
  }
  // A folder evaluated without the measurement, and a run folder, are refused by name.
  REQUIRE(run_cli({"eval", (base / "runs" / "nope-1").string(), "--out", (base / "plain").string()})
              .rc == 0);
  for (const fs::path& bad : {base / "plain", base / "runs" / "nope-1"}) {
    const CliResult e =
        run_cli({"representation", evals[1], bad.string(), "--out", (base / "bad").string()});
    check_one_error_line(e);
    CHECK(e.err.find(bad.string()) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(base / "bad"));
}

TEST_CASE("representation.csv reads back into its results, and a bad file is refused by line") {
  std::vector<LengthResult> results(2);
  results[0].length = 4;
  results[1].length = 8;
  results[1].representation = {{0, 120, 60, 0.25, 0.125, 0.5, 1.5},
                               {1, 20, 10, 0.75, 0.0625, 2, 3}};
  const std::string text = representation_csv_text(results);
  std::vector<LengthResult> back(2);
  back[0].length = 4;
  back[1].length = 8;
  add_representation_csv(text, "r.csv", back);
  CHECK(back[0].representation.empty());
  REQUIRE(back[1].representation.size() == 2);
  CHECK(representation_csv_text(back) == text);
  CHECK(back[1].representation[1].kl_divergence == 2.0);
  CHECK_THROWS_WITH_AS(add_representation_csv(text, "r.csv", back),
                       doctest::Contains("a second time"), UsageError);
  std::vector<LengthResult> other(1);
  other[0].length = 4;
  CHECK_THROWS_WITH_AS(add_representation_csv(text, "r.csv", other),
                       doctest::Contains("length 8 is not in results.csv"), UsageError);
  CHECK_THROWS_AS(add_representation_csv("length,x\n", "r.csv", other), UsageError);
}
