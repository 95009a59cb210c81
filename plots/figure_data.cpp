#include "plots/figure_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

#include "core/csv.hpp"
#include "results/correlation.hpp"
#include "results/figure_metric.hpp"

namespace lenlab {

namespace {

// One run's values: (x, value), ascending by x.
using Curve = std::vector<std::pair<int, double>>;

// The metric at each length the run was tested at: the mean over the length's rows (one row, or
// passkey's depth cells). results.csv is ascending by length, so a length's rows are adjacent.
Curve length_curve(const RunRecord& r, const std::string& metric) {
  Curve out;
  for (size_t i = 0; i < r.results.size();) {
    const int length = r.results[i].length;
    double sum = 0;
    int n = 0;
    for (; i < r.results.size() && r.results[i].length == length; ++i, ++n)
      sum += metric_value(r.results[i], metric);
    out.push_back({length, sum / n});  // one row: its value exactly (scalar figures unchanged)
  }
  return out;
}

// The metric at each position of the run's longest test length (markov, text).
Curve position_curve(const RunRecord& r, const std::string& metric) {
  Curve out;
  for (const PositionResult& p : r.positions)
    out.push_back({p.position, position_metric_value(p, metric)});
  return out;
}

// line.x and the mean, min and max over seeds: every x any run has, each over the runs that have
// it (runs of one line share their lengths; a run cut short has fewer).
void summarize_over_seeds(const std::vector<Curve>& curves, FigureLine& line) {
  std::vector<int> xs;
  for (const Curve& c : curves)
    for (const auto& [x, v] : c) xs.push_back(x);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  for (const int x : xs) {
    double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
    int n = 0;
    for (const Curve& c : curves) {
      const auto at = std::lower_bound(
          c.begin(), c.end(), x, [](const auto& point, int key) { return point.first < key; });
      if (at == c.end() || at->first != x) continue;
      const double v = at->second;
      sum += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      ++n;
    }
    if (n == 0) continue;
    line.x.push_back(x);
    line.value_mean.push_back(sum / n);
    line.value_min.push_back(lo);
    line.value_max.push_back(hi);
  }
}

// line.depths and line.grid from the runs' (length, depth) cells; line.x must hold the lengths.
void depth_grid(const std::string& metric, FigureLine& line) {
  for (const RunRecord* r : line.runs)
    for (const LengthResult& row : r->results)
      if (row.depth >= 0) line.depths.push_back(row.depth);
  std::sort(line.depths.begin(), line.depths.end());
  line.depths.erase(std::unique(line.depths.begin(), line.depths.end()), line.depths.end());
  const size_t n_depths = line.depths.size();
  std::vector<double> sum(line.x.size() * n_depths, 0.0);
  std::vector<int> count(sum.size(), 0);
  for (const RunRecord* r : line.runs)
    for (const LengthResult& row : r->results) {
      if (row.depth < 0) continue;
      const size_t i = std::lower_bound(line.x.begin(), line.x.end(), row.length) - line.x.begin();
      const size_t j =
          std::lower_bound(line.depths.begin(), line.depths.end(), row.depth) - line.depths.begin();
      if (i == line.x.size() || line.x[i] != row.length) continue;  // every length is in x
      sum[i * n_depths + j] += metric_value(row, metric);
      ++count[i * n_depths + j];
    }
  line.grid.resize(sum.size());
  for (size_t k = 0; k < sum.size(); ++k)
    line.grid[k] = count[k] ? sum[k] / count[k] : std::numeric_limits<double>::quiet_NaN();
}

// The mean of the finite values (NaN when none).
double finite_mean(const std::vector<double>& v) {
  double sum = 0;
  int n = 0;
  for (double x : v)
    if (std::isfinite(x)) sum += x, ++n;
  return n ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

// line.temperature from its runs' search curves: per length past l_train, the metric at each grid
// τ over the seeds, and each criterion's τ.
void temperature_curves(const std::string& metric, FigureLine& line) {
  std::map<int, std::map<double, std::vector<double>>> values;  // length → τ → per seed
  for (const RunRecord* r : line.runs)
    for (const TemperatureCurvePoint& p : r->temperature_curve) {
      const auto it = p.metrics.find(metric);
      if (it != p.metrics.end() && std::isfinite(it->second))
        values[p.length][p.tau].push_back(it->second);
    }
  // Not a structured binding: the lambdas below capture length, which clang before 16 refuses
  // for structured bindings (Debian 12's clang 14 builds the fuzz targets).
  for (const auto& entry : values) {
    const int length = entry.first;
    const auto& by_tau = entry.second;
    TemperatureCurve c;
    c.length = length;
    for (auto t = by_tau.rbegin(); t != by_tau.rend(); ++t) {  // τ descending
      c.tau.push_back(t->first);
      c.value_mean.push_back(finite_mean(t->second));
      c.value_min.push_back(*std::min_element(t->second.begin(), t->second.end()));
      c.value_max.push_back(*std::max_element(t->second.begin(), t->second.end()));
    }
    std::map<std::string, std::vector<double>> chosen;
    for (const RunRecord* r : line.runs) {
      const auto has = [&](const TemperatureCurvePoint& p) { return p.length == length; };
      if (std::none_of(r->temperature_curve.begin(), r->temperature_curve.end(), has)) continue;
      ++c.runs;
      const auto bound = r->temperature_at_bound.find(length);
      if (bound != r->temperature_at_bound.end()) {
        c.at_low_bound += bound->second == "low";
        c.at_high_bound += bound->second == "high";
      }
      const auto add = [&](const std::string& criterion, const std::map<int, double>& m) {
        const auto it = m.find(length);
        if (it != m.end()) chosen[criterion].push_back(it->second);
      };
      for (const auto& [criterion, by_length] : r->temperature_chosen) add(criterion, by_length);
      add("proposition_1", r->temperature_pmax_closed_form);
      add("proposition_2", r->temperature_entropy_closed_form);
    }
    for (const std::string& criterion : temperature_criteria())
      c.chosen[criterion] = finite_mean(chosen[criterion]);
    line.temperature.push_back(std::move(c));
  }
}

// A number, or an empty cell when it does not apply (NaN).
std::string cell(double v) {
  return std::isnan(v) ? "" : fmt::format("{:.9g}", v);
}

constexpr const char* kCsvHeader =
    "figure,line,run_id,task,pe,reparam,reparam_shift,l_train,l_test,steps,seed,length,mse,"
    "mean_prediction,mean_target,mse_reparam,final_train_loss,depth,position,token_accuracy,"
    "exact_match,cross_entropy,excess_ce,entropy,misalignment,misalignment_divergence,"
    "misalignment_entropy,misalignment_perfect,tau\n";

// The columns every row has, up to seed: figure .. seed, then length (reparam and reparam_shift
// empty for a token task, which has no target map).
std::string row_head(const FigureSummary& fig, const FigureLine& line, const RunRecord& r,
                     bool token) {
  const TrainSpec& s = r.spec;
  return fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{}", csv_field(fig.spec->name), csv_field(line.label),
      csv_field(r.id), s.task, s.pe, token ? "" : csv_quoted(s.reparam),
      token ? "" : fmt::format("{}", s.reparam_shift), s.l_train, s.l_test, s.steps, s.seed);
}

// The metric of a run at one length (the mean over its rows there); NaN when not tested.
double value_at(const RunRecord& r, const std::string& metric, int length) {
  for (const auto& [x, v] : length_curve(r, metric))
    if (x == length) return v;
  return std::numeric_limits<double>::quiet_NaN();
}

MisalignmentScatter misalignment_scatter(const FigureSummary& fig, const std::string& metric,
                                         int at_length) {
  MisalignmentScatter sc;
  sc.at_length = at_length;
  std::vector<const RunRecord*> seen;
  std::vector<double> mis, far, train_t, far_t, div_d, far_d;
  for (size_t line = 0; line < fig.lines.size(); ++line)
    for (const RunRecord* r : fig.lines[line].runs) {
      if (!r->misalignment || std::find(seen.begin(), seen.end(), r) != seen.end()) continue;
      seen.push_back(r);
      const MisalignmentPoint p{
          line,
          r,
          *r->misalignment,
          r->misalignment_divergence.value_or(std::numeric_limits<double>::quiet_NaN()),
          value_at(*r, metric, r->spec.l_train),
          value_at(*r, metric, at_length)};
      if (std::isnan(p.far)) {
        ++sc.without_far;
        continue;
      }
      sc.points.push_back(p);
      mis.push_back(p.misalignment);
      far.push_back(p.far);
      if (!std::isnan(p.at_train)) {
        train_t.push_back(p.at_train);
        far_t.push_back(p.far);
      }
      if (!std::isnan(p.divergence)) {
        div_d.push_back(p.divergence);
        far_d.push_back(p.far);
      }
    }
  sc.pearson_misalignment = pearson(mis, far);
  sc.spearman_misalignment = spearman(mis, far);
  sc.n_train = static_cast<int>(train_t.size());
  sc.pearson_train = pearson(train_t, far_t);
  sc.spearman_train = spearman(train_t, far_t);
  sc.n_divergence = static_cast<int>(div_d.size());
  sc.pearson_divergence = pearson(div_d, far_d);
  sc.spearman_divergence = spearman(div_d, far_d);
  sc.pearson_misalignment_ci = bootstrap_interval(mis, far, pearson);
  sc.spearman_misalignment_ci = bootstrap_interval(mis, far, spearman);
  sc.pearson_train_ci = bootstrap_interval(train_t, far_t, pearson);
  sc.spearman_train_ci = bootstrap_interval(train_t, far_t, spearman);
  sc.pearson_divergence_ci = bootstrap_interval(div_d, far_d, pearson);
  sc.spearman_divergence_ci = bootstrap_interval(div_d, far_d, spearman);
  return sc;
}

}  // namespace

const std::vector<std::string>& temperature_criteria() {
  static const std::vector<std::string> names = {"auto-pmax", "auto-entropy", "proposition_1",
                                                 "proposition_2", "log_rule"};
  return names;
}

std::string temperature_criterion_label(const std::string& criterion) {
  if (criterion == "auto-pmax") return "Algorithm 1, max-probability";
  if (criterion == "auto-entropy") return "Algorithm 1, entropy";
  if (criterion == "proposition_1") return "Proposition 1";
  if (criterion == "proposition_2") return "Proposition 2";
  if (criterion == "log_rule") return "log rule";
  throw std::invalid_argument("temperature_criterion_label: unknown criterion " + criterion);
}

double temperature_curve_at(const TemperatureCurve& c, double tau) {
  // c.tau descends; between two grid points the value is interpolated linearly.
  for (size_t i = 0; i + 1 < c.tau.size(); ++i)
    if (tau <= c.tau[i] && tau >= c.tau[i + 1]) {
      const double w = (c.tau[i] - tau) / (c.tau[i] - c.tau[i + 1]);
      return (1 - w) * c.value_mean[i] + w * c.value_mean[i + 1];
    }
  if (c.tau.size() == 1 && tau == c.tau[0]) return c.value_mean[0];
  return std::numeric_limits<double>::quiet_NaN();  // outside the grid
}

FigureSummary summarize_figure(const FigureSpec& figure, const std::vector<uint64_t>& seeds,
                               const std::map<std::string, RunRecord>& runs,
                               const std::function<std::string(const TrainSpec&)>& id_of) {
  if (figure.metric.empty())
    throw std::invalid_argument("summarize_figure: figure '" + figure.name + "' has no metric");
  if (figure.plot == "misalignment" && figure.at_length < 1)
    throw std::invalid_argument("summarize_figure: misalignment figure '" + figure.name +
                                "' has no at_length");
  FigureSummary out;
  out.spec = &figure;
  for (size_t i = 0; i < figure.n_lines(); ++i) {
    FigureLine line;
    line.label = figure.line_label(i);
    line.pooled = figure.is_pooled(i);
    const std::vector<uint64_t> line_seeds = figure.line_seeds(i, seeds);
    line.spec = figure.line_spec(i, line_seeds.front());
    for (uint64_t seed : line_seeds) {
      if (figure.grid.empty()) {
        const TrainSpec spec = figure.line_spec(i, seed);
        const auto it = runs.find(id_of ? id_of(spec) : run_id(spec));
        if (it == runs.end() || it->second.status != "completed") {
          ++out.missing_runs;
          continue;
        }
        line.runs.push_back(&it->second);
        continue;
      }
      // [select]: a choice needs every combination run (diverged ones are not chosen).
      GridChoice choice;
      choice.seed = seed;
      bool all_ran = true;
      for (const TrainSpec& spec : figure.line_candidates(i, seed)) {
        const auto it = runs.find(id_of ? id_of(spec) : run_id(spec));
        if (it == runs.end() || it->second.status == "running")
          all_ran = false;
        else if (it->second.status == "completed")
          choice.tried.push_back(&it->second);
      }
      choice.chosen = all_ran ? choose_on_validation(choice.tried) : nullptr;
      if (!choice.chosen) {
        ++out.missing_runs;
        continue;
      }
      line.runs.push_back(choice.chosen);
      line.choices.push_back(std::move(choice));
    }
    std::vector<Curve> curves;
    for (const RunRecord* r : line.runs)
      curves.push_back(figure.plot == "position" ? position_curve(*r, figure.metric)
                                                 : length_curve(*r, figure.metric));
    summarize_over_seeds(curves, line);
    if (figure.plot == "depth") depth_grid(figure.metric, line);
    if (figure.plot == "temperature") temperature_curves(figure.metric, line);
    out.lines.push_back(std::move(line));
  }
  if (figure.plot == "misalignment")
    out.scatter = misalignment_scatter(out, figure.metric, figure.at_length);
  return out;
}

std::string figure_csv(const FigureSummary& fig) {
  std::string out = kCsvHeader;
  const bool positions = fig.spec->plot == "position";
  for (const FigureLine& line : fig.lines)
    for (const RunRecord* r : line.runs) {
      // misalignment and (markov) its parts and a perfect model's value: 4 cells, empty if none
      auto number = [](const std::optional<double>& v) {
        return v ? fmt::format("{:.9g}", *v) : std::string();
      };
      const std::string misalignment =
          fmt::format("{},{},{},{}", number(r->misalignment), number(r->misalignment_divergence),
                      number(r->misalignment_entropy), number(r->misalignment_perfect));
      if (positions) {
        const std::string length =
            r->results.empty() ? "" : fmt::format("{}", r->results.back().length);
        for (const PositionResult& p : r->positions)
          out +=
              fmt::format("{},{},,,,,{:.9g},,{},{:.9g},,{:.9g},{:.9g},{:.9g},{},\n",
                          row_head(fig, line, *r, true), length, r->final_train_loss, p.position,
                          p.token_accuracy, p.cross_entropy, p.excess(), p.entropy, misalignment);
        continue;
      }
      if (fig.spec->plot == "temperature") {
        const bool token = is_token_task(parse_task(r->spec.task));
        const auto metric = [&](const TemperatureCurvePoint& p, const char* name) {
          const auto it = p.metrics.find(name);
          return it == p.metrics.end() ? std::string() : cell(it->second);
        };
        for (const TemperatureCurvePoint& p : r->temperature_curve)
          out += fmt::format("{},{},{},,,,{:.9g},,,{},{},{},{},,{},{:.9g}\n",
                             row_head(fig, line, *r, token), p.length, metric(p, "mse"),
                             r->final_train_loss, metric(p, "token_accuracy"),
                             metric(p, "exact_match"), metric(p, "cross_entropy"),
                             metric(p, "excess_ce"), misalignment, p.tau);
        continue;
      }
      for (const LengthResult& x : r->results) {
        if (!x.token) {
          out += fmt::format("{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},,,,,,,,{},\n",
                             row_head(fig, line, *r, false), x.length, x.mse, x.mean_prediction,
                             x.mean_target, x.mse_reparam, r->final_train_loss, misalignment);
          continue;
        }
        out += fmt::format("{},{},,,,,{:.9g},{},,{:.9g},{:.9g},{:.9g},{},,{},\n",
                           row_head(fig, line, *r, true), x.length, r->final_train_loss,
                           x.depth < 0 ? "" : fmt::format("{:.9g}", x.depth), x.token_accuracy,
                           x.exact_match, x.cross_entropy, cell(x.excess_ce), misalignment);
      }
    }
  return out;
}

}  // namespace lenlab
