// nan, inf and -inf planted in every file kind lenlab reads numbers from for statistics: each is
// refused naming the file, the line and the column (results/csv_rows.hpp's CsvRows::finite), where
// lenlab never writes one; the columns where it does (an infinite mse beside n_nonfinite > 0, a
// missing excess written as nan, the last step of a diverged run) still read. Spearman's ρ over a
// NaN is undefined rather than an endless ranking.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "results/correlation.hpp"
#include "results/length_files.hpp"
#include "results/loss_file.hpp"
#include "results/position_bias_file.hpp"

using namespace lenlab;

namespace {

const char* const kPlanted[] = {"nan", "inf", "-inf"};

// A file kind: its text with `cell` at the planted column, and how lenlab reads it.
struct FileKind {
  std::string name;    // where, as the reader names the file
  std::string column;  // the planted column's header name
  std::function<std::string(const std::string& cell)> text;
  std::function<void(const std::string& text)> read;
};

// results.csv of one scalar row at length 1, and one token row (for the per-length files).
const std::string kScalarResults =
    "length,mse,mean_prediction,mean_target,mse_reparam,n_sequences,exact,n_clamped,n_nonfinite\n"
    "1,0.5,1,1,0.5,4,0,0,0\n";
const std::string kTokenResults =
    "length,depth,token_accuracy,exact_match,cross_entropy,excess_ce,n_sequences,n_answer_tokens,"
    "chain_cross_entropy\n"
    "1,,0.5,0.5,0.7,nan,4,4,nan\n";

std::vector<LengthResult> token_results() {
  return parse_results_csv(kTokenResults, "results.csv");
}

std::vector<FileKind> file_kinds() {
  std::vector<FileKind> kinds;
  const auto scalar_results = [](int column) {
    return [column](const std::string& cell) {
      std::vector<std::string> cells = {"1", "0.5", "1", "1", "0.5", "4", "0", "0", "0"};
      cells[column] = cell;
      std::string row;
      for (const std::string& c : cells) row += (row.empty() ? "" : ",") + c;
      return kScalarResults.substr(0, kScalarResults.find('\n') + 1) + row + "\n";
    };
  };
  const auto read_results = [](const std::string& t) { parse_results_csv(t, "results.csv"); };
  for (const auto& [column, name] :
       {std::pair{1, "mse"}, {2, "mean_prediction"}, {3, "mean_target"}, {4, "mse_reparam"}})
    kinds.push_back({"results.csv", name, scalar_results(column), read_results});
  for (const auto& [column, name] :
       {std::pair{2, "token_accuracy"}, {3, "exact_match"}, {4, "cross_entropy"}})
    kinds.push_back({"results.csv", name,
                     [column](const std::string& cell) {
                       std::vector<std::string> cells = {"1",   "",  "0.5", "0.5", "0.7",
                                                         "nan", "4", "4",   "nan"};
                       cells[column] = cell;
                       std::string row;
                       for (size_t i = 0; i < cells.size(); ++i) row += (i ? "," : "") + cells[i];
                       return kTokenResults.substr(0, kTokenResults.find('\n') + 1) + row + "\n";
                     },
                     read_results});
  const std::string positions =
      "length,position,cross_entropy,entropy,excess_ce,token_accuracy,chain_cross_entropy\n";
  kinds.push_back(
      {"positions.csv", "cross_entropy",
       [=](const std::string& c) { return positions + "1,1," + c + ",nan,nan,1,nan\n"; },
       [](const std::string& t) { parse_positions_csv(t, "positions.csv"); }});
  kinds.push_back(
      {"positions.csv", "token_accuracy",
       [=](const std::string& c) { return positions + "1,1,0.5,nan,nan," + c + ",nan\n"; },
       [](const std::string& t) { parse_positions_csv(t, "positions.csv"); }});
  const std::string attention = "length,depth,layer,head,entropy,max_prob,logit_std\n";
  kinds.push_back({"attention.csv", "entropy",
                   [=](const std::string& c) { return attention + "1,,0,0," + c + ",0.5,\n"; },
                   [](const std::string& t) {
                     std::vector<LengthResult> r = token_results();
                     add_attention_csv(t, "attention.csv", r);
                   }});
  kinds.push_back({"attention.csv", "max_prob",
                   [=](const std::string& c) { return attention + "1,,0,0,0.5," + c + ",\n"; },
                   [](const std::string& t) {
                     std::vector<LengthResult> r = token_results();
                     add_attention_csv(t, "attention.csv", r);
                   }});
  kinds.push_back({"attention_distance.csv", "mean_logit",
                   [](const std::string& c) {
                     return "length,depth,layer,head,distance,mean_logit\n1,,0,0,0," + c + "\n";
                   },
                   [](const std::string& t) {
                     std::vector<LengthResult> r = token_results();
                     add_attention_distance_csv(t, "attention_distance.csv", r);
                   }});
  const std::vector<std::string> representation = {"sliced_w1", "js_distance", "kl_divergence",
                                                   "reference_std"};
  for (size_t k = 0; k < representation.size(); ++k)
    kinds.push_back(
        {"representation.csv", representation[k],
         [k](const std::string& c) {
           std::vector<std::string> values = {"0.1", "0.2", "0.3", "0.4"};
           values[k] = c;
           return "length,depth,layer,rows,reference_rows,sliced_w1,js_distance,kl_divergence,"
                  "reference_std\n1,,0,10,10," +
                  values[0] + "," + values[1] + "," + values[2] + "," + values[3] + "\n";
         },
         [](const std::string& t) {
           std::vector<LengthResult> r = token_results();
           add_representation_csv(t, "representation.csv", r);
         }});
  // loss.csv: a non-finite loss or gradient norm followed by another step; lr anywhere.
  kinds.push_back(
      {"loss.csv", "lr",
       [](const std::string& c) { return "step,lr,loss,grad_norm\n1," + c + ",0.5,1\n"; },
       [](const std::string& t) { parse_loss_csv(t, "loss.csv"); }});
  kinds.push_back({"loss.csv", "loss",
                   [](const std::string& c) {
                     return "step,lr,loss,grad_norm\n1,0.001," + c + ",1\n2,0.001,0.5,1\n";
                   },
                   [](const std::string& t) { parse_loss_csv(t, "loss.csv"); }});
  kinds.push_back({"loss.csv", "grad_norm",
                   [](const std::string& c) {
                     return "step,lr,loss,grad_norm\n1,0.001,0.5," + c + "\n2,0.001,0.5,1\n";
                   },
                   [](const std::string& t) { parse_loss_csv(t, "loss.csv"); }});
  kinds.push_back(
      {"position_bias.csv", "bias",
       [](const std::string& c) { return "layer,head,distance,bias\n0,0,0," + c + "\n"; },
       [](const std::string& t) { parse_position_bias_csv(t, "position_bias.csv"); }});
  return kinds;
}

}  // namespace

TEST_CASE("nan, inf and -inf in a results file are refused by file, line and column") {
  for (const FileKind& kind : file_kinds()) {
    CAPTURE(kind.name);
    CAPTURE(kind.column);
    CHECK_NOTHROW(kind.read(kind.text("0.25")));  // the same file with a finite value reads
    for (const char* cell : kPlanted) {
      CAPTURE(cell);
      const std::string want = kind.name + ":2: column " + kind.column + " is '" + cell + "'";
      CHECK_THROWS_WITH_AS(kind.read(kind.text(cell)), doctest::Contains(want.c_str()), UsageError);
    }
  }
}

TEST_CASE("the non-finite values lenlab itself writes still read") {
  // An infinite mse (and mean prediction) beside predictions that were not finite, a nan
  // mse_reparam there too.
  const std::string header = kScalarResults.substr(0, kScalarResults.find('\n') + 1);
  const auto rows = parse_results_csv(header + "1,inf,inf,1,nan,4,0,0,4\n", "results.csv");
  CHECK(std::isinf(rows[0].mse));
  CHECK(rows[0].n_nonfinite == 4);
  CHECK_THROWS_WITH_AS(parse_results_csv(header + "1,inf,1,1,0.5,4,0,0,0\n", "results.csv"),
                       doctest::Contains("only a row with n_nonfinite > 0"), UsageError);
  // A token task without an excess: nan; never inf.
  CHECK(std::isnan(token_results()[0].excess_ce));
  const std::string token_header = kTokenResults.substr(0, kTokenResults.find('\n') + 1);
  CHECK_THROWS_WITH_AS(
      parse_results_csv(token_header + "1,,0.5,0.5,0.7,inf,4,4,nan\n", "results.csv"),
      doctest::Contains("column excess_ce is 'inf'"), UsageError);
  // A diverged run's last step.
  const auto log =
      parse_loss_csv("step,lr,loss,grad_norm\n1,0.001,0.5,1\n2,0.001,nan,inf\n", "loss.csv");
  REQUIRE(log.size() == 2);
  CHECK(std::isnan(log[1].loss));
}

TEST_CASE("Spearman's rho over a NaN is undefined, not an endless ranking") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(spearman({1, nan, 3, 4}, {1, 2, 3, 4})));
  CHECK(std::isnan(spearman({1, 2, 3, 4}, {nan, nan, nan, nan})));
  // Infinities rank as the largest and smallest values.
  CHECK(spearman({1, 2, 3, std::numeric_limits<double>::infinity()}, {1, 2, 3, 4}) ==
        doctest::Approx(1.0));
}
