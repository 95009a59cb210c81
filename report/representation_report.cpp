#include "report/representation_report.hpp"
#include "results/length_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>

#include "core/atomic_file.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/text_file.hpp"
#include "plots/gnuplot_parts.hpp"
#include "plots/gnuplot_style.hpp"
#include "results/correlation.hpp"
#include "results/eval_record.hpp"
#include "results/run_record.hpp"

namespace lenlab {

namespace fs = std::filesystem;

namespace {

// One `lenlab eval --representation-stats` folder.
struct Evaluation {
  fs::path dir;
  std::string run;  // the source run's id
  nlohmann::json config;
  std::string task, pe, line;
  int seed = 0, reference = 0;
  std::vector<LengthResult> results;
};

// One (evaluation, length, depth): the distances' means over layers and the excess loss.
struct Point {
  size_t eval = 0;
  int length = 0;
  double depth = kNoDepth;
  double w1 = 0, js = 0, kl = 0, excess = 0;
};

Evaluation load_evaluation(const fs::path& dir) {
  const EvalSource source = load_eval_source(dir);
  if (!source.representation_reference || !fs::exists(dir / "representation.csv"))
    throw UsageError(fmt::format(
        "{} was evaluated without --representation-stats (no representation.csv); run `lenlab "
        "eval RUN --representation-stats --out {}` again",
        dir.string(), dir.string()));
  Evaluation e;
  e.dir = dir;
  e.run = source.run_id;
  e.config = source.config;
  e.reference = *source.representation_reference;
  try {
    e.task = e.config.at("task").get<std::string>();
    e.pe = e.config.at("pe").get<std::string>();
    e.seed = e.config.at("seed").get<int>();
  } catch (const nlohmann::json::exception& ex) {
    throw UsageError(fmt::format("{}: {}", (dir / "eval.json").string(), ex.what()));
  }
  e.results = load_results(dir);
  add_representation_csv(read_text_file(dir / "representation.csv"),
                         (dir / "representation.csv").string(), e.results);
  return e;
}

// Each evaluation's line: the settings in which the evaluations differ, the seed, the encoding
// (the figure's panels) and a fine-tune's parent (its id names the parent's seed too) aside, each
// as this run's config writes it (one at its default is not written); "" when they share every
// other setting.
void name_lines(std::vector<Evaluation>& evals) {
  std::set<std::string> differ;
  for (const Evaluation& e : evals)
    for (const auto& [key, value] : e.config.items())
      if (key != "seed" && key != "pe" && key != "threads" && key != "init_parent")
        for (const Evaluation& f : evals)
          if (!f.config.contains(key) || f.config.at(key) != value) differ.insert(key);
  for (Evaluation& e : evals) {
    std::string label;
    for (const std::string& key : differ) {
      if (!e.config.contains(key)) continue;  // a setting at its default is left out of the id
      const nlohmann::json& v = e.config.at(key);
      label += fmt::format("{}{}={}", label.empty() ? "" : " ", key,
                           v.is_string() ? v.get<std::string>() : v.dump());
    }
    e.line = label;
  }
}

double loss_of(const LengthResult& r) {
  return r.token ? r.cross_entropy : r.mse;
}

// The points of one evaluation; `with_reference` keeps the reference length's (all distances 0).
// A point whose excess loss is not finite (an infinite mse) is left out and counted in `dropped`.
std::vector<Point> points_of(const Evaluation& e, size_t index, bool with_reference, int& dropped) {
  std::vector<Point> out;
  for (const LengthResult& r : e.results) {
    if (r.representation.empty() || (!with_reference && r.length == e.reference)) continue;
    Point p;
    p.eval = index;
    p.length = r.length;
    p.depth = r.depth;
    for (const RepresentationDistance& d : r.representation) {
      p.w1 += d.sliced_w1 / r.representation.size();
      p.js += d.js_distance / r.representation.size();
      p.kl += d.kl_divergence / r.representation.size();
    }
    if (e.task == "markov") {
      p.excess = r.excess_ce;
    } else {
      const auto ref = std::find_if(e.results.begin(), e.results.end(), [&](const LengthResult& x) {
        return x.length == e.reference && x.depth == r.depth;
      });
      if (ref == e.results.end())
        throw UsageError(fmt::format(
            "{}: the excess loss of a {} run is its loss minus the loss at l_train = {}, which "
            "this evaluation lacks; evaluate with --lengths including {}",
            e.dir.string(), e.task, e.reference, e.reference));
      p.excess = loss_of(r) - loss_of(*ref);
    }
    if (std::isfinite(p.excess))
      out.push_back(p);
    else if (!with_reference)
      ++dropped;
  }
  return out;
}

std::string interval_text(double value, const Interval& ci) {
  if (std::isnan(value)) return "—";
  if (std::isnan(ci.lo)) return fmt::format("{:+.2f}", value);
  return fmt::format("{:+.2f} [{:+.2f}, {:+.2f}]", value, ci.lo, ci.hi);
}

// One table row: the coefficients of distance(point) with the excess loss over `points`.
std::string correlation_row(const std::string& set, const std::vector<Point>& points,
                            const std::function<double(const Point&)>& distance) {
  std::vector<double> x, y;
  std::vector<int> run;  // a run's points resample together: they are not independent draws
  for (const Point& p : points) {
    x.push_back(distance(p));
    y.push_back(p.excess);
    run.push_back(static_cast<int>(p.eval));
  }
  const double r = pearson(x, y), rho = spearman(x, y);
  return fmt::format("| {} | {} | {} | {} |\n", set, points.size(),
                     interval_text(r, cluster_bootstrap_interval(x, y, run, pearson)),
                     interval_text(rho, cluster_bootstrap_interval(x, y, run, spearman)));
}

// A (encoding, line)'s curve: per length the mean over its seeds and depths.
struct Curve {
  std::string pe, line;
  std::map<int, std::pair<double, double>> sums;  // length → (Σ excess, Σ w1)
  std::map<int, int> counts;
};

// The figure: per encoding a row of two panels (excess loss, sliced W1) against length, and below
// them one key for all rows, as wide as the figure (a line keeps its colour in every panel; a key
// inside a half-width panel hid curves, and gnuplot drops one wider than its panel). Panels are
// placed by origin and size, not `layout`, so that the key's row can span both columns and be as
// tall as its lines need. Every setting is made inside the body, which is drawn twice (PNG, SVG).
std::string figure_script(const std::vector<std::string>& encodings,
                          const std::vector<Curve>& curves, const std::set<int>& references,
                          const std::string& task) {
  const std::string loss = task == "markov" ? "excess cross-entropy (nats)" : "excess loss";
  const int rows = static_cast<int>(encodings.size());
  // A curve's key label: its line, or its encoding where the runs differ in nothing else.
  const auto label_of = [](const Curve& c) { return c.line.empty() ? c.pe : c.line; };
  std::set<std::string> distinct;
  for (const Curve& c : curves) distinct.insert(label_of(c));
  const std::vector<std::string> labels(distinct.begin(), distinct.end());
  // Design px: 60 for the title, 300 per row, the key 30 per line and a margin.
  const int title_px = 60, row_px = 300, key_px = 30 * static_cast<int>(labels.size()) + 40;
  const int total_px = title_px + row_px * rows + key_px;
  const gnuplot_style::Canvas canvas = gnuplot_style::canvas(1100, total_px);
  const auto fraction = [&](int px) { return static_cast<double>(px) / total_px; };
  const auto colour_of = [&](const Curve& c) {
    return gnuplot_parts::line_colour(std::find(labels.begin(), labels.end(), label_of(c)) -
                                      labels.begin());
  };

  std::string body = "set encoding utf8\nset logscale x 2\nset xlabel 'test length'\n";
  for (const int reference : references)
    body += fmt::format(
        "set arrow from {0}, graph 0 to {0}, graph 1 nohead dashtype 2 lc rgb '#808080'\n",
        reference);
  body += "unset key\nset grid lc rgb '#d8d8d8'\n";
  body += fmt::format(
      "set multiplot title {} noenhanced {}\n",
      gnuplot_quote(fmt::format("Attention-output distance from l_train ({}) and excess loss "
                                "(paper 004's Figure 8; mean over seeds)",
                                fmt::join(references, ", "))),
      canvas.title_font());
  for (int row = 0; row < rows; ++row) {
    const std::string& pe = encodings[row];
    for (int panel = 0; panel < 2; ++panel) {
      body += fmt::format("set origin {:.4f},{:.4f}\nset size 0.5,{:.4f}\n", 0.5 * panel,
                          fraction(key_px + row_px * (rows - 1 - row)), fraction(row_px));
      body += fmt::format("set title {} noenhanced\n",
                          gnuplot_quote(pe + ": " + (panel == 0 ? loss : "sliced W1")));
      std::string plot = "plot ";
      bool first = true;
      for (size_t i = 0; i < curves.size(); ++i) {
        if (curves[i].pe != pe) continue;
        plot += fmt::format(
            "{}'representation.dat' index {} using 1:{} with linespoints pointtype 7 pointsize 0.6 "
            "linewidth 1.5 linecolor rgb '{}' notitle",
            first ? "" : ", \\\n     ", i, panel == 0 ? 2 : 3, colour_of(curves[i]));
        first = false;
      }
      body += plot + "\n";
    }
  }
  // The key's row: an empty plot whose only content is one sample per line.
  body += fmt::format(
      "set origin 0,0\nset size 1,{:.4f}\nunset title\nunset border\nunset tics\nunset xlabel\n"
      "unset grid\nunset arrow\nunset logscale x\nset xrange [0:1]\nset yrange [0:1]\n"
      "set key center center vertical Left reverse noenhanced\nplot ",
      fraction(key_px));
  for (size_t i = 0; i < labels.size(); ++i)
    body += fmt::format(
        "{}NaN with linespoints pointtype 7 pointsize 0.6 linewidth 1.5 linecolor rgb '{}' "
        "title {}",
        i == 0 ? "" : ", \\\n     ", gnuplot_parts::line_colour(i), gnuplot_quote(labels[i]));
  body += "\nunset multiplot\nreset\n";  // the SVG's body starts from gnuplot's defaults again

  std::string s =
      "# lenlab representation: the attention outputs' distance from the reference length and "
      "the excess loss.\n# Redraw with `gnuplot representation.gp`: reads representation.dat, "
      "writes representation.png and .svg.\n";
  s += gnuplot_style::png_terminal(canvas);
  s += "set output 'representation.png'\n" + body;
  s += gnuplot_style::svg_terminal(canvas);
  s += "set output 'representation.svg'\n" + body + "set output\n";
  return s;
}

}  // namespace

int run_representation_report(const RepresentationReportOptions& o) {
  if (o.dirs.empty())
    throw UsageError("give at least one `lenlab eval --representation-stats` folder");
  if (o.out.empty()) throw UsageError("--out is required: the folder to write the report into");
  std::vector<Evaluation> evals;
  for (const fs::path& dir : o.dirs) {
    if (fs::exists(o.out) && fs::exists(dir) && fs::equivalent(o.out, dir))
      throw UsageError(
          fmt::format("--out {} is one of the evaluations; choose another folder", o.out.string()));
    evals.push_back(load_evaluation(dir));
  }
  for (const Evaluation& e : evals)
    if (e.task != evals[0].task)
      throw UsageError(fmt::format(
          "{} is a {} run, {} a {} run: one report compares runs of one task (their losses "
          "differ in kind)",
          e.dir.string(), e.task, evals[0].dir.string(), evals[0].task));
  name_lines(evals);

  // ---- the points, the curves, the coefficients
  std::vector<Point> points;
  int dropped = 0;  // points without a finite excess loss
  std::vector<Curve> curves;
  std::vector<std::string> encodings;
  for (size_t i = 0; i < evals.size(); ++i) {
    const Evaluation& e = evals[i];
    for (const Point& p : points_of(e, i, false, dropped)) points.push_back(p);
    if (std::find(encodings.begin(), encodings.end(), e.pe) == encodings.end())
      encodings.push_back(e.pe);
    auto c = std::find_if(curves.begin(), curves.end(),
                          [&](const Curve& x) { return x.pe == e.pe && x.line == e.line; });
    if (c == curves.end()) {
      curves.push_back({e.pe, e.line, {}, {}});
      c = curves.end() - 1;
    }
    for (const Point& p : points_of(e, i, true, dropped)) {
      c->sums[p.length].first += p.excess;
      c->sums[p.length].second += p.w1;
      ++c->counts[p.length];
    }
  }
  std::stable_sort(curves.begin(), curves.end(), [&](const Curve& a, const Curve& b) {
    const auto rank = [&](const std::string& pe) {
      return std::find(encodings.begin(), encodings.end(), pe) - encodings.begin();
    };
    return std::make_pair(rank(a.pe), a.line) < std::make_pair(rank(b.pe), b.line);
  });

  std::string csv =
      "run,line,pe,seed,length,depth,sliced_w1,js_distance,kl_divergence,excess_loss\n";
  for (const Point& p : points) {
    const Evaluation& e = evals[p.eval];
    csv += fmt::format("{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g}\n", csv_field(e.run),
                       csv_field(e.line), csv_field(e.pe), e.seed, p.length,
                       p.depth == kNoDepth ? "" : fmt::format("{:.9g}", p.depth), p.w1, p.js, p.kl,
                       p.excess);
  }
  std::string dat =
      "# representation.dat: per block (encoding, line) length, mean excess loss, "
      "mean sliced W1 (over seeds and depths)\n";
  for (const Curve& c : curves) {
    dat += fmt::format("# {} {}\n", c.pe, c.line);
    for (const auto& [length, sums] : c.sums)
      dat += fmt::format("{} {:.9g} {:.9g}\n", length, sums.first / c.counts.at(length),
                         sums.second / c.counts.at(length));
    dat += "\n\n";
  }

  std::set<int> references;
  for (const Evaluation& e : evals) references.insert(e.reference);
  const std::string T = fmt::format("{}", fmt::join(references, ", "));
  std::string md = fmt::format(
      "# Attention-output distance against excess loss (paper 004's measurement)\n\n"
      "{} evaluations of `{}` runs ({}), distances from each run's l_train ({}), {} points at "
      "the other lengths. Each point is one run at one length (and passkey depth): the distance "
      "is the mean over layers, the excess loss {}. The 95% intervals are percentile bootstraps "
      "over runs: a run's points are drawn together, as they are not independent.\n\n",
      evals.size(), evals[0].task, fmt::join(encodings, ", "), T, points.size(),
      evals[0].task == "markov"
          ? "the cross-entropy above the chain's own loss on the same tokens (excess_ce)"
          : "the loss minus its value at l_train");
  if (dropped > 0)
    md += fmt::format(
        "{} point{} left out: the excess loss is not finite there (an infinite mse; see each "
        "evaluation's results.csv).\n\n",
        dropped, dropped == 1 ? " is" : "s are");
  md += "## Sliced Wasserstein-1\n\n| points | n | Pearson r | Spearman ρ |\n|---|---|---|---|\n";
  md += correlation_row("all", points, [](const Point& p) { return p.w1; });
  md += correlation_row("all: the test length instead of the distance", points,
                        [](const Point& p) { return static_cast<double>(p.length); });
  for (const std::string& pe : encodings) {
    std::vector<Point> sub;
    for (const Point& p : points)
      if (evals[p.eval].pe == pe) sub.push_back(p);
    md += correlation_row(pe, sub, [](const Point& p) { return p.w1; });
  }
  std::set<int> lengths;
  for (const Point& p : points) lengths.insert(p.length);
  for (const int l : lengths) {
    std::vector<Point> sub;
    for (const Point& p : points)
      if (p.length == l) sub.push_back(p);
    md += correlation_row(fmt::format("length {}", l), sub, [](const Point& p) { return p.w1; });
  }
  // Encoding and length both fixed: does the distance rank the runs (lines and seeds)?
  md +=
      "\n## Per encoding and length: Spearman ρ of sliced W1 with the excess loss across runs\n\n";
  md += fmt::format("| encoding | {} |\n|---|", fmt::join(lengths, " | "));
  for (size_t i = 0; i < lengths.size(); ++i) md += "---|";
  md += "\n";
  for (const std::string& pe : encodings) {
    md += fmt::format("| {} |", pe);
    for (const int l : lengths) {
      std::vector<double> x, y;
      std::vector<int> run;
      for (const Point& p : points)
        if (p.length == l && evals[p.eval].pe == pe) {
          x.push_back(p.w1);
          y.push_back(p.excess);
          run.push_back(static_cast<int>(p.eval));
        }
      md += x.empty() ? std::string(" — |")
                      : fmt::format(" {} (n {}) |",
                                    interval_text(spearman(x, y),
                                                  cluster_bootstrap_interval(x, y, run, spearman)),
                                    x.size());
    }
    md += "\n";
  }
  md +=
      "\n## JS distance and KL divergence (histograms on the same projections)\n\n"
      "| measure | n | Pearson r | Spearman ρ |\n|---|---|---|---|\n";
  md += correlation_row("JS distance", points, [](const Point& p) { return p.js; });
  md += correlation_row("KL divergence", points, [](const Point& p) { return p.kl; });
  md += "\nFiles: points.csv (every point), representation.png (the curves).\n";

  ensure_writable_directory(o.out);
  write_file_atomic(o.out / "points.csv", csv);
  write_file_atomic(o.out / "representation.dat", dat);
  write_file_atomic(o.out / "representation.gp",
                    figure_script(encodings, curves, references, evals[0].task));
  write_file_atomic(o.out / "report.md", md);
  const bool drawn = run_gnuplot_script(o.out, "representation", o.plot);
  if (o.log) {
    *o.log << fmt::format(
        "{} evaluations, {} points; wrote {}/{{points.csv, report.md, "
        "representation.dat, representation.gp{}}}\n",
        evals.size(), points.size(), o.out.string(),
        drawn ? ", representation.png, representation.svg" : "");
    if (!drawn)
      *o.log << fmt::format(
          "gnuplot not found: install it (apt-get install gnuplot) and run "
          "`gnuplot representation.gp` in {} to draw the figure\n",
          o.out.string());
  }
  return 0;
}

}  // namespace lenlab
