// Figures drawn with gnuplot: the .dat and .gp written for a hand-made FigureSummary, the images
// when gnuplot is installed, the fallback when it is not, and labels that must stay text (quotes,
// gnuplot's `backquote` shell substitution) rather than become gnuplot syntax.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "plots/gnuplot.hpp"
#include "tests/support/test_support.hpp"

using namespace lenlab;
namespace fs = std::filesystem;

namespace {

using lenlab::test::read_text;
fs::path fresh_dir(const std::string& name) {
  return lenlab::test::fresh_dir("plots", name);
}

// The .dat's data: rows per block, blocks being separated by two blank lines (a single blank
// line breaks a curve inside its block).
std::vector<int> block_rows(const std::string& dat) {
  std::vector<int> rows;
  std::istringstream in(dat);
  std::string line;
  int blanks = 0;
  bool open = false;
  while (std::getline(in, line)) {
    if (line.empty()) {
      ++blanks;
      continue;
    }
    if (line[0] == '#') continue;
    if (!open || blanks >= 2) rows.push_back(0);
    open = true;
    blanks = 0;
    ++rows.back();
  }
  return rows;
}

// A figure of `lines` lines over lengths 1..l_test, the MSE growing past l_train.
struct TestFigure {
  FigureSpec spec;
  FigureSummary summary;
};

TestFigure make_figure(const std::string& name, const std::vector<std::string>& labels,
                       const std::vector<int>& l_trains, int l_test) {
  TestFigure f;
  f.spec.name = name;
  f.spec.title = "Length prediction: fails past l_train";
  f.spec.vary = "pe";
  f.spec.metric = "mse";
  for (size_t i = 0; i < labels.size(); ++i) {
    FigureLine line;
    line.label = labels[i];
    line.spec.l_train = l_trains[i];
    line.spec.l_test = l_test;
    for (int l = 1; l <= l_test; ++l) {
      const double past = std::max(0, l - l_trains[i]);
      const double mean = 1e-5 * std::pow(1.0 + past, 1.0 + 0.5 * static_cast<double>(i));
      line.x.push_back(l);
      line.value_mean.push_back(mean);
      line.value_min.push_back(mean / 2);
      line.value_max.push_back(mean * 2);
    }
    f.summary.lines.push_back(line);
  }
  return f;
}

bool starts_with_png_signature(const std::string& bytes) {
  return bytes.rfind("\x89PNG\r\n\x1a\n", 0) == 0;
}

}  // namespace

TEST_CASE("plots: the .dat holds one block per curve with a row per finite length") {
  TestFigure f = make_figure("t1", {"nope", "rope"}, {10, 10}, 20);
  FigureLine& rope = f.summary.lines[1];
  rope.value_mean[4] = std::numeric_limits<double>::quiet_NaN();  // left out, the curve breaks
  rope.value_mean[5] = 0.0;                                       // drawn at the floor
  FigureLine empty;
  empty.label = "alibi";
  f.summary.lines.push_back(empty);  // no completed run: no block, but in the key
  f.summary.spec = &f.spec;
  const std::vector<TheoryCurve> theory = {{"closed form", {1, 2, 3}, {1e-3, 2e-3, 3e-3}}};

  const std::string dat = figure_dat(f.summary, theory);
  CHECK(block_rows(dat) == std::vector<int>{20, 19, 3});
  CHECK(dat.find("\n1e-12 ") == std::string::npos);
  CHECK(dat.find("\n6 1e-12 ") != std::string::npos);
  CHECK(dat.find("# pe = alibi: no data, no block") != std::string::npos);

  const std::string gp = figure_gnuplot_script(f.summary, theory);
  CHECK(gp.find("'figt1.dat' index 2 using 1:2 with lines dashtype 2") != std::string::npos);
  CHECK(gp.find("title 'pe = alibi (no data)'") != std::string::npos);
  CHECK(gp.find("set logscale y") != std::string::npos);
  CHECK(gp.find("set output 'figt1.png'") != std::string::npos);
  CHECK(gp.find("set output 'figt1.svg'") != std::string::npos);
  CHECK(gp.find("set object 1 rectangle from first 1, graph 0 to first 10,") != std::string::npos);
  CHECK(gp.find("set arrow") == std::string::npos);  // one l_train: one shaded block
}

TEST_CASE("plots: lines with different l_train get a dashed line each") {
  TestFigure f = make_figure("t3", {"5", "10", "15"}, {5, 10, 15}, 30);
  f.spec.vary = "l_train";
  f.summary.spec = &f.spec;
  const std::string gp = figure_gnuplot_script(f.summary, {});
  CHECK(gp.find("to first 5, graph 1") != std::string::npos);  // shaded up to the smallest
  CHECK(gp.find("set arrow 3 from first 15, graph 0 to first 15, graph 1 nohead") !=
        std::string::npos);
  CHECK(gp.find("title 'l_train = 15'") != std::string::npos);
}

TEST_CASE("plots: labels are quoted so gnuplot reads them as text") {
  CHECK(gnuplot_quote("it's") == "'it''s'");
  CHECK(gnuplot_quote("say \"hi\"") == "'say \"hi\"'");
  CHECK(gnuplot_quote("a\nb") == "'a b'");
  CHECK(gnuplot_quote("`touch x` @m \\") == "'`touch x` @m \\'");

  TestFigure f = make_figure("q", {"it's \"odd\"", "`touch pwned`"}, {4, 4}, 8);
  f.spec.title = "line one\nset output 'evil' \\";
  f.summary.spec = &f.spec;
  const std::string gp = figure_gnuplot_script(f.summary, {});
  CHECK(gp.find("title 'pe = it''s \"odd\"'") != std::string::npos);
  CHECK(gp.find("\nset output 'evil'") == std::string::npos);  // the title stays one line

  const fs::path dir = fresh_dir("quotes");
  if (!gnuplot_available({})) {
    MESSAGE("gnuplot is not installed: skipping the run of the quoted labels");
    return;
  }
  CHECK(render_figure(f.summary, dir, {}));
  CHECK(!fs::exists(dir / "pwned"));  // the backquotes were not run as a shell command
  CHECK(!fs::exists(dir / "evil"));
}

TEST_CASE("plots: with gnuplot the figure is drawn as PNG and SVG") {
  if (!gnuplot_available({})) {
    MESSAGE("gnuplot is not installed (apt-get install gnuplot-nox): skipping the drawing test");
    return;
  }
  TestFigure f = make_figure("1b", {"nope", "learned", "alibi", "rope"}, {10, 10, 10, 10}, 50);
  f.summary.spec = &f.spec;
  const fs::path dir = fresh_dir("drawn");
  const std::vector<TheoryCurve> theory = {{"theory", {1, 25, 50}, {1e-5, 1e-2, 1e-1}}};
  REQUIRE(render_figure(f.summary, dir, {}, theory));
  CHECK(starts_with_png_signature(read_text(dir / "fig1b.png")));
  CHECK(read_text(dir / "fig1b.svg").find("<svg") != std::string::npos);
  CHECK(block_rows(read_text(dir / "fig1b.dat")) == std::vector<int>{50, 50, 50, 50, 3});

  // Lines trained on different lengths (figure 3) draw too.
  TestFigure f3 = make_figure("3a", {"5", "10", "15", "20"}, {5, 10, 15, 20}, 50);
  f3.spec.vary = "l_train";
  f3.spec.title = "Sum prediction, NoPE, for several training lengths";
  f3.summary.spec = &f3.spec;
  CHECK(render_figure(f3.summary, dir, {}));
  CHECK(starts_with_png_signature(read_text(dir / "fig3a.png")));

  // A figure without any completed run still draws (an empty frame saying so).
  TestFigure none = make_figure("e", {}, {}, 10);
  none.summary.spec = &none.spec;
  CHECK(render_figure(none.summary, dir, {}));

  // So does one whose lines have no completed run yet (a folder still training): each line in
  // the key as "(no data)", and the figure drawn, not gnuplot's axis error.
  TestFigure waiting = make_figure("w", {"baseline", "method"}, {16, 32}, 64);
  for (FigureLine& l : waiting.summary.lines)
    l.x.clear(), l.value_mean.clear(), l.value_min.clear(), l.value_max.clear();
  waiting.summary.spec = &waiting.spec;
  CHECK(render_figure(waiting.summary, dir, {}));
  CHECK(starts_with_png_signature(read_text(dir / "figw.png")));
  CHECK(read_text(dir / "figw.gp").find("plot NaN notitle, \\\n     keyentry") !=
        std::string::npos);
}

TEST_CASE("plots: without gnuplot only the .dat and .gp are written") {
  TestFigure f = make_figure("1a", {"nope", "rope"}, {10, 10}, 20);
  f.summary.spec = &f.spec;
  const fs::path dir = fresh_dir("missing");
  std::ofstream(dir / "fig1a.png") << "stale";  // from an earlier render: no longer matches
  const PlotOptions opt{"/nonexistent/gnuplot"};
  CHECK(!gnuplot_available(opt));
  CHECK(!render_figure(f.summary, dir, opt));
  CHECK(fs::exists(dir / "fig1a.dat"));
  CHECK(fs::exists(dir / "fig1a.gp"));
  CHECK(!fs::exists(dir / "fig1a.png"));
  CHECK(!fs::exists(dir / "fig1a.svg"));
  CHECK(!gnuplot_available({"no-such-gnuplot-program"}));

  const std::string msg = gnuplot_missing_message(dir);
  CHECK(msg.find("apt-get install gnuplot-nox") != std::string::npos);
  CHECK(msg.find("lenlab plot " + dir.string()) != std::string::npos);
  CHECK(msg.find('\n') == std::string::npos);
}

TEST_CASE("plots: a gnuplot that fails is a UsageError with its error line") {
  TestFigure f = make_figure("f", {"nope"}, {4}, 8);
  f.summary.spec = &f.spec;
  const fs::path dir = fresh_dir("failing");
  // A stand-in gnuplot that fails the way gnuplot does.
  const fs::path fake = dir / "fake-gnuplot";
  std::ofstream(fake) << "#!/bin/sh\necho '' >&2\necho 'plot x' >&2\n"
                         "echo '\"figf.gp\" line 3: undefined variable: x' >&2\nexit 1\n";
  fs::permissions(fake, fs::perms::owner_all);
  CHECK_THROWS_WITH_AS(render_figure(f.summary, dir, {fake.string()}),
                       doctest::Contains("\"figf.gp\" line 3: undefined variable: x"), UsageError);
  CHECK(!fs::exists(dir / "figf.png"));
}
