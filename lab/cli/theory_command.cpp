// `lenlab theory`: flags, the printed table and summary, the CSV file.
#include "lab/cli/theory_command.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "lab/cli/cli_options.hpp"
#include "models/config.hpp"
#include "reparam/reparam.hpp"
#include "tasks/task.hpp"
#include "theory/token_layout.hpp"
#include "train/run_settings.hpp"

namespace lenlab {
namespace {

// A number in a fixed-width column; blank when unavailable.
std::string col(double v, int width = 11) {
  if (std::isnan(v)) return fmt::format("{:>{}}", "-", width);
  return fmt::format("{:>{}.4g}", v, width);
}

std::string matrix_text(const Eigen::MatrixXd& m) {
  std::string s = "[";
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    s += r ? "; " : "";
    for (Eigen::Index c = 0; c < m.cols(); ++c)
      s += fmt::format("{}{:.6g}", c ? ", " : "", m(r, c));
  }
  return s + "]";
}

std::string type_names(const std::vector<Token>& types) {
  std::string s;
  const char* names[] = {"0", "1", "BOS", "EOS"};
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + std::string(names[types[i]]);
  return s;
}

std::string fit_text(const PowerLawFit& f) {
  if (!f.ok()) return "n/a (error past l_train is 0 up to rounding, or not finite)";
  return fmt::format("p = {:.3f}, a = {:.3g}, c = {:.3g} (rms log residual {:.2g}, {} lengths)",
                     f.p, f.a, f.c, f.rms_log_residual, f.n_points);
}

std::string paper_gamma_text(const TheoryReport& r) {
  const bool identity = r.options.reparam == "identity" && r.options.reparam_shift == 0;
  const int big_l = r.options.l_train;
  if (identity && r.task == TaskKind::kLength)
    return fmt::format("Γ* = (L+1)/2 = {:.6g}", paper_gamma_length(big_l));
  if (identity && r.task == TaskKind::kSum)
    return fmt::format("Γ* = L(L+3)/(2(L+H_L)) = {:.6g}", paper_gamma_sum(big_l));
  if (identity) return "Γ* = 1: exact";  // mean, mean-uniform
  return fmt::format("Γ = {:.6g} (fitted to f(y) by eq. 8)", r.paper->gamma);
}

}  // namespace

std::string format_theory_report(const TheoryReport& r) {
  const TheoryOptions& o = r.options;
  std::string s = fmt::format(
      "linear-attention theory (paper App. B.1): task {}, l_train {}, l_test {}, reparam {}{}, "
      "tokens {}\n\n",
      o.task, o.l_train, o.l_test, o.reparam,
      o.reparam_shift != 0 ? fmt::format(" (shift {})", o.reparam_shift) : "", o.tokens);
  s += fmt::format("{:>6} {:>11} | {:^23} | {:^23} | {:^23} | {:>15}\n", "", "", "paper Γ form",
                   "optimum, head d >= 2", "optimum, head d = 1", "runs");
  s += fmt::format("{:>6} {:>11} | {:>11} {:>11} | {:>11} {:>11} | {:>11} {:>11} | {:>11} {:>3}\n",
                   "length", "E[y]", "E[y_hat]", "mse", "E[y_hat]", "mse", "E[y_hat]", "mse", "mse",
                   "n");
  for (const TheoryRow& row : r.rows) {
    s += fmt::format("{:>5}{} {} | {} {} | {} {} | {} {} | {} {:>3}\n", row.length,
                     row.in_train ? "*" : " ", col(row.mean_target), col(row.paper_prediction),
                     col(row.paper_mse), col(row.optimum_prediction), col(row.optimum_mse),
                     col(row.scalar_prediction), col(row.scalar_mse), col(row.runs_mse),
                     r.measured ? std::to_string(row.runs_n) : "-");
  }
  s += "(* = training length; E[y_hat] = mean prediction f^-1(g); mse = E[(y_hat - y)^2])\n\n";

  const LayoutShape shape = layout_shape(r.layout);
  s += "training loss (eq. 8, on f(y)):\n";
  if (r.paper)
    s += fmt::format("  paper Γ form          {:.6g}   {}\n", r.paper->train_loss,
                     paper_gamma_text(r));
  else
    s += "  paper Γ form          - (the paper's ansatz is for --tokens none)\n";
  s += fmt::format("  optimum, d >= 2       {:.6g}\n", r.optimum.train_loss);
  s += fmt::format("  optimum, d = 1        {:.6g}\n", r.scalar.train_loss);
  s += fmt::format("products P[query][key] = q·κ (rows: query {}; columns: key {}):\n",
                   type_names(shape.query_types), type_names(shape.key_types));
  if (r.paper) s += fmt::format("  paper Γ form          {}\n", matrix_text(r.paper->products));
  s += fmt::format("  optimum, d >= 2       {} (rank {}{})\n", matrix_text(r.optimum.products),
                   r.optimum.rank,
                   r.optimum.rank <= 1 ? ": a head of size 1 attains it" : ": needs d >= 2");
  s += fmt::format("  optimum, d = 1        {}\n", matrix_text(r.scalar.products));
  if (r.paper) {
    const double gap = r.paper->train_loss - r.scalar.train_loss;
    s += gap > 1e-9 * std::max(1.0, r.scalar.train_loss)
             ? fmt::format(
                   "  the paper's Γ form is not the optimum of its own scalar model: "
                   "its training loss is {:.4g} higher\n",
                   gap)
             : "  the paper's Γ form is the optimum of its scalar model (d = 1)\n";
  }
  s += "\nerror growth past l_train, fitted c·(l - a)^p (least squares in log space):\n";
  if (r.paper) s += "  paper Γ form          " + fit_text(r.paper_fit) + "\n";
  s += "  optimum, d >= 2       " + fit_text(r.optimum_fit) + "\n";
  s += "  optimum, d = 1        " + fit_text(r.scalar_fit) + "\n";
  if (r.measured) {
    const MeasuredErrors& m = *r.measured;
    std::string pes;
    for (size_t i = 0; i < m.pe_values.size(); ++i) pes += (i ? ", " : "") + m.pe_values[i];
    s += fmt::format("  runs ({} completed, pe {}) {}\n", m.runs.size(), pes.empty() ? "-" : pes,
                     m.runs.empty() ? "no matching runs under " + o.runs : fit_text(r.runs_fit));
    if (m.n_unreadable > 0)
      s += fmt::format("  ({} manifest.json files under {} were not lenlab manifests: skipped)\n",
                       m.n_unreadable, o.runs);
  }
  return s;
}

TheoryCommand::TheoryCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "theory",
      "The linear-attention theory of length generalization (paper App. B.1): the paper's closed "
      "form, the exact optimum, and the measured error of runs, per test length");
  CLI::App& cmd = *command_;
  cmd.option_defaults()->always_capture_default();
  TheoryOptions& o = options_;
  cmd.add_option("--task", o.task, "What to predict: " + join_choices(scalar_task_names()));
  add_setting(cmd, "--l-train", o.l_train,
              "Longest training length (lengths uniform in 1..l-train)");
  add_setting(cmd, "--l-test", o.l_test, "Report every length 1..l-test");
  cmd.add_option("--reparam", o.reparam,
                 "Target map f (train on f(y), error on y): " +
                     join_choices(Reparam::builtin_names()) + ", or an expression in x");
  cmd.add_option("--reparam-inverse", o.reparam_inverse, "f^-1 as an expression in x");
  cmd.add_option("--reparam-shift", o.reparam_shift, "Train on f(y + c)");
  cmd.add_option("--tokens", o.tokens,
                 "Special tokens around the bits: " + join_choices(token_layout_names()) +
                     " (the paper's analysis: none; lenlab's transformers: bos,eos)");
  cmd.add_option("--runs", o.runs,
                 "Folder searched (recursively) for completed runs with the same task, l-train, "
                 "reparam and shift; their mse is averaged per length");
  cmd.add_option("--pe", o.pe, "With --runs: only runs with this positional encoding");
  cmd.add_option("--out", out_file_, "Also write the table as CSV to this file");
  cmd.footer(
      "Example:\n  lenlab theory --task length --l-train 10 --l-test 50 --tokens bos,eos "
      "--runs runs/ --out theory.csv");
}

int TheoryCommand::run(const CommandLine& line) {
  std::ostream& out = line.out;
  const TheoryOptions& o = options_;
  if (!o.pe.empty()) {
    if (o.runs.empty())
      throw UsageError(fmt::format(
          "--pe {} filters the runs of --runs DIR, and no --runs was given; add --runs, or drop "
          "--pe",
          o.pe));
    for_flag("--pe", [&] { parse_positional_encoding(o.pe); });  // lists the valid ones
  }
  // The theory's parsers know no flags: each value is checked here first, under its flag.
  for_flag("--task", [&] { parse_scalar_task(o.task); });
  for_flag("--tokens", [&] { parse_token_layout(o.tokens); });
  reparam_of(o.reparam, o.reparam_inverse, o.reparam_shift);
  const TheoryReport report = compute_theory(o);
  if (report.measured && report.measured->runs.empty()) {
    const MeasuredErrors& m = *report.measured;
    throw UsageError(fmt::format(
        "--runs {}: no completed run has task {}, l_train {}, reparam {} (shift {}){}; found {} "
        "run(s) there, {} completed{}",
        o.runs, o.task, o.l_train, o.reparam, o.reparam_shift, o.pe.empty() ? "" : ", pe " + o.pe,
        m.n_found, m.n_completed,
        m.n_unreadable ? fmt::format(", and {} unreadable manifest.json file(s)", m.n_unreadable)
                       : ""));
  }
  // The file first: an unwritable --out is a usage error, reported before any output.
  if (!out_file_.empty()) write_file_atomic(out_file_, theory_csv(report));
  out << format_theory_report(report);
  if (!out_file_.empty()) out << "\nwrote " << out_file_ << "\n";
  return 0;
}

}  // namespace lenlab
