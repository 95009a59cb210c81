// stats/paired_test.hpp: the exact tests against brute force (every sign pattern counted) and
// against SciPy (binomtest, wilcoxon(method="exact"), the t quantiles), Holm's adjustment by hand,
// and the two verdicts the issue pins down: identical lines are no difference, 10 of 10 wide wins
// are p < 0.01.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "stats/paired_test.hpp"

using namespace lenlab;

namespace {

// The two-sided signed-rank p by enumerating all 2^n sign patterns of the mid-ranks of |d|.
double brute_force_wilcoxon(const std::vector<double>& differences) {
  std::vector<double> d;
  for (const double x : differences)
    if (x != 0) d.push_back(x);
  const size_t n = d.size();
  if (n == 0) return 1;
  std::vector<double> rank(n);
  for (size_t i = 0; i < n; ++i) {
    double below = 0, equal = 0;
    for (size_t j = 0; j < n; ++j) {
      below += std::abs(d[j]) < std::abs(d[i]);
      equal += std::abs(d[j]) == std::abs(d[i]);
    }
    rank[i] = below + (equal + 1) / 2;
  }
  double observed = 0;
  for (size_t i = 0; i < n; ++i)
    if (d[i] > 0) observed += rank[i];
  double at_most = 0, at_least = 0;
  for (unsigned long mask = 0; mask < (1ul << n); ++mask) {
    double s = 0;
    for (size_t i = 0; i < n; ++i)
      if (mask >> i & 1) s += rank[i];
    at_most += s <= observed + 1e-9;
    at_least += s >= observed - 1e-9;
  }
  return std::min(1.0, 2 * std::min(at_most, at_least) / std::ldexp(1.0, static_cast<int>(n)));
}

// Debian's /usr/bin/python3 with SciPy, or "" when either is missing.
std::string run_python(const std::string& script) {
  const std::string command = "/usr/bin/python3 -c '" + script + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "";
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  return pclose(pipe) == 0 ? out : "";
}

}  // namespace

TEST_CASE("the signed-rank test's exact p equals every sign pattern counted, ties and zeros too") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-3, 3);  // few values: many ties and zeros
  std::normal_distribution<double> normal(0.2, 1);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + trial % 14;
    std::vector<double> d(n);
    for (double& x : d) x = trial % 2 ? small(rng) : normal(rng);
    bool exact = false;
    const double p = wilcoxon_signed_rank_p(d, &exact);
    CHECK(exact);
    CHECK(p == doctest::Approx(brute_force_wilcoxon(d)).epsilon(1e-12));
  }
}

TEST_CASE("the exact tests and the detectable effect equal SciPy's on a table of cases") {
  // Cases without ties or zeros (where SciPy's exact wilcoxon is defined): n = 3..20.
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0.3, 1);
  nlohmann::json cases = nlohmann::json::array();
  std::vector<std::vector<double>> all;
  for (int n = 3; n <= 20; ++n)
    for (int rep = 0; rep < 2; ++rep) {
      std::vector<double> d(n);
      for (double& x : d) x = std::round(normal(rng) * 1e6) / 1e6 + 1e-9 * (&x - d.data());
      all.push_back(d);
      cases.push_back(d);
    }
  const std::string out = run_python(
      "import json, sys\n"
      "from scipy import stats\n"
      "cases = json.loads(sys.argv[1])\n"
      "rows = []\n"
      "for d in cases:\n"
      "    k = sum(1 for x in d if x > 0)\n"
      "    n = len(d)\n"
      "    sd = stats.tstd(d)\n"
      "    mde = (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * sd / n ** 0.5\n"
      "    rows.append([stats.wilcoxon(d, method=\"exact\").pvalue,\n"
      "                 stats.binomtest(k, n, 0.5).pvalue, mde])\n"
      "print(json.dumps(rows))\n' '" +
      cases.dump());
  if (out.empty()) {
    MESSAGE("skipped: /usr/bin/python3 with scipy is not installed (scripts/install-deps.sh)");
    return;
  }
  const nlohmann::json reference = nlohmann::json::parse(out);
  REQUIRE(reference.size() == all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const std::vector<double> zeros(all[i].size(), 0.0);
    const PairedComparison c = compare_paired(all[i], zeros, /*lower_is_better=*/false);
    INFO("case " << i << " (n = " << all[i].size() << ")");
    CHECK(c.p_wilcoxon == doctest::Approx(reference[i][0].get<double>()).epsilon(1e-12));
    CHECK(c.p_sign == doctest::Approx(reference[i][1].get<double>()).epsilon(1e-12));
    // Boost.Math's t quantiles agree with SciPy's to ~1e-9 at some degrees of freedom.
    CHECK(c.smallest_detectable == doctest::Approx(reference[i][2].get<double>()).epsilon(1e-8));
  }
}

TEST_CASE("two lines with the same runs are no difference, 10 wide wins of 10 are p < 0.01") {
  const std::vector<double> same = {0.12, 0.5, 0.031, 0.2, 0.9};
  const PairedComparison none = compare_paired(same, same, /*lower_is_better=*/true);
  CHECK(none.ties == 5);
  CHECK(none.p_sign == 1);
  CHECK(none.p_wilcoxon == 1);
  CHECK(none.mean_difference == 0);
  CHECK(none.interval_low == 0);
  CHECK(none.interval_high == 0);

  std::vector<double> method, baseline;
  for (int seed = 0; seed < 10; ++seed) {
    baseline.push_back(1.0 + 0.1 * seed);
    method.push_back(0.1 + 0.01 * seed);  // a tenth of the error, every seed
  }
  const PairedComparison helps = compare_paired(method, baseline, /*lower_is_better=*/true);
  CHECK(helps.wins == 10);
  CHECK(helps.p_sign == doctest::Approx(2.0 / 1024));
  CHECK(helps.p_wilcoxon == doctest::Approx(2.0 / 1024));
  CHECK(helps.interval_high < 0);  // the whole interval below zero: lower error
  CHECK(helps.interval_low <= helps.mean_difference);
  // Higher is better (an accuracy): the same numbers are ten losses.
  CHECK(compare_paired(method, baseline, /*lower_is_better=*/false).losses == 10);
}

TEST_CASE("Holm's adjustment by hand, and a mismatched or non-finite comparison refused") {
  const std::vector<double> adjusted = holm_adjust({0.01, 0.04, 0.03, 0.005});
  // Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 → step-down max.
  CHECK(adjusted[0] == doctest::Approx(0.03));
  CHECK(adjusted[1] == doctest::Approx(0.06));
  CHECK(adjusted[2] == doctest::Approx(0.06));
  CHECK(adjusted[3] == doctest::Approx(0.02));
  CHECK(holm_adjust({0.6, 0.9})[1] == 1);
  CHECK_THROWS_WITH_AS(compare_paired({1, 2}, {1}, true), doctest::Contains("2 values against 1"),
                       UsageError);
  CHECK_THROWS_WITH_AS(compare_paired({1, NAN}, {1, 2}, true), doctest::Contains("seed 2"),
                       UsageError);
  CHECK(std::isinf(compare_paired({1}, {2}, true).smallest_detectable));
}
