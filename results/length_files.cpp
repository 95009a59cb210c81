#include "results/length_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "results/csv_rows.hpp"
#include "train/attention_probe.hpp"
#include "train/attention_stats.hpp"
#include "train/representation_stats.hpp"

namespace lenlab {

namespace {

constexpr const char* kResultsHeader =
    "length,mse,mean_prediction,mean_target,mse_reparam,n_sequences,exact,n_clamped,n_nonfinite";
constexpr const char* kTokenResultsHeader =
    "length,depth,token_accuracy,exact_match,cross_entropy,excess_ce,n_sequences,n_answer_tokens,"
    "chain_cross_entropy";
// With greedy decoding (EvalJob::greedy): the scores of the written answer, two more columns.
constexpr const char* kGeneratedColumns = ",generated_token_accuracy,generated_exact_match";
constexpr const char* kPositionsHeader =
    "length,position,cross_entropy,entropy,excess_ce,token_accuracy,chain_cross_entropy";
// The files of runs evaluated by an earlier lenlab (up to 96a8ecd), whose markov excess_ce was the
// cross-entropy minus the mean of H_t (the chain's expected loss) rather than minus the chain's
// own loss on the same tokens. Their other tasks' rows read as before (no excess); a markov row is
// refused, so that no figure or verdict mixes the two definitions.
constexpr const char* kTokenResultsHeaderBefore =
    "length,depth,token_accuracy,exact_match,cross_entropy,excess_ce,n_sequences,n_answer_tokens";
constexpr const char* kPositionsHeaderBefore =
    "length,position,cross_entropy,entropy,excess_ce,token_accuracy";

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

UsageError excess_before_pairing(const std::string& where) {
  return UsageError(fmt::format(
      "{} holds a markov excess_ce measured by an earlier lenlab, against the chain's expected "
      "entropy H_t (a file without the chain_cross_entropy column): today's excess_ce subtracts "
      "the chain's own loss on the same test tokens "
      "(docs/tasks.md, \"Results\"), and the two are not to be mixed. Evaluate the run again "
      "(lenlab eval RUN --out NEW_FOLDER), or train it again (remove its folder, or choose another "
      "--out)",
      where));
}

std::string depth_cell(double depth) {
  return depth == kNoDepth ? "" : fmt::format("{:.9g}", depth);
}

// The result a per-length CSV row belongs to: its length (cell 0) and depth (cell 1, empty for
// none); a UsageError naming the line when results.csv has no such row.
LengthResult& result_of_row(const CsvRows& csv, std::vector<LengthResult>& results) {
  const int length = csv.integer(0);
  const double depth = csv.empty(1) ? kNoDepth : csv.number(1);
  for (LengthResult& r : results)
    if (r.length == length && r.depth == depth) return r;
  throw UsageError(fmt::format("{}: length {}{} is not in results.csv", csv.line_ref(), length,
                               depth == kNoDepth ? "" : fmt::format(" at depth {}", depth)));
}

std::vector<LengthResult> parse_token_results(const std::string& text, const std::string& where) {
  const bool before_pairing = first_line(text) == kTokenResultsHeaderBefore;
  const std::string generated_header = std::string(kTokenResultsHeader) + kGeneratedColumns;
  const bool generated = first_line(text) == generated_header;
  CsvRows csv(text, where,
              before_pairing ? kTokenResultsHeaderBefore
              : generated    ? generated_header.c_str()
                             : kTokenResultsHeader,
              "results");
  std::vector<LengthResult> rows;
  while (csv.next()) {
    LengthResult r;
    r.token = true;
    r.length = csv.integer(0);
    r.depth = csv.empty(1) ? kNoDepth : csv.number(1);
    if (r.depth != kNoDepth && !(r.depth >= 0 && r.depth <= 1))
      throw UsageError(fmt::format("{}: depth {} is not in [0, 1]", csv.line_ref(), r.depth));
    r.token_accuracy = csv.finite(2);
    r.exact_match = csv.finite(3);
    r.cross_entropy = csv.finite(4);
    r.excess_ce = csv.number(5);  // nan unless markov (a missing excess); never infinite
    if (std::isinf(r.excess_ce))
      throw csv.not_finite(5, " (nan marks a task without an excess, never inf)");
    r.n_sequences = csv.integer(6);
    r.n_answer_tokens = csv.integer(7);
    if (before_pairing) {
      if (!std::isnan(r.excess_ce)) throw excess_before_pairing(where);
    } else {
      r.chain_cross_entropy = csv.number(8);  // nan unless markov, as excess_ce
      if (std::isinf(r.chain_cross_entropy) ||
          std::isnan(r.chain_cross_entropy) != std::isnan(r.excess_ce))
        throw csv.not_finite(8, " (nan exactly where excess_ce is nan: a task without a chain)");
    }
    if (generated) {
      r.generated_token_accuracy = csv.finite(9);
      r.generated_exact_match = csv.finite(10);
    }
    if (!rows.empty() &&
        std::make_pair(r.length, r.depth) <= std::make_pair(rows.back().length, rows.back().depth))
      throw UsageError(fmt::format(
          "{}: length {} depth '{}' after length {} depth '{}': (length, depth) must ascend",
          csv.line_ref(), r.length, depth_cell(r.depth), rows.back().length,
          depth_cell(rows.back().depth)));
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

std::vector<std::string> length_file_names() {
  return {"results.csv",        "positions.csv",     "attention.csv", "attention_distance.csv",
          "representation.csv", "untrained_bias.csv"};
}

std::vector<std::string> write_length_files(const std::filesystem::path& dir,
                                            const std::vector<LengthResult>& results) {
  std::vector<std::string> written = {"results.csv"};
  write_file_atomic(dir / "results.csv", results_csv_text(results));
  if (!results.empty() && !results.back().positions.empty()) {  // markov
    write_file_atomic(dir / "positions.csv", positions_csv_text(results.back()));
    written.push_back("positions.csv");
  }
  if (!results.empty() && !results.front().attention.empty()) {
    write_file_atomic(dir / "attention.csv", attention_csv_text(results));
    write_file_atomic(dir / "attention_distance.csv", attention_distance_csv_text(results));
    written.push_back("attention.csv");
    written.push_back("attention_distance.csv");
  }
  if (!results.empty() && !results.front().representation.empty()) {
    write_file_atomic(dir / "representation.csv", representation_csv_text(results));
    written.push_back("representation.csv");
  }
  if (!results.empty() && !std::isnan(results.front().untrained_pairs)) {
    write_file_atomic(dir / "untrained_bias.csv", untrained_bias_csv_text(results));
    written.push_back("untrained_bias.csv");
  }
  return written;
}

std::string results_csv_text(const std::vector<LengthResult>& rows) {
  const bool token = !rows.empty() && rows.front().token;
  // The generated columns when every row has them (a run decoded greedily), else none.
  const bool generated = token && std::all_of(rows.begin(), rows.end(), [](const LengthResult& r) {
                           return !std::isnan(r.generated_token_accuracy);
                         });
  std::string out = std::string(token ? kTokenResultsHeader : kResultsHeader) +
                    (generated ? kGeneratedColumns : "") + "\n";
  for (const LengthResult& r : rows) {
    if (r.token != token)
      throw std::logic_error("results_csv_text: scalar and token results in one file");
    if (token)
      out += fmt::format("{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{:.9g}", r.length,
                         depth_cell(r.depth), r.token_accuracy, r.exact_match, r.cross_entropy,
                         r.excess_ce, r.n_sequences, r.n_answer_tokens, r.chain_cross_entropy) +
             (generated ? fmt::format(",{:.9g},{:.9g}", r.generated_token_accuracy,
                                      r.generated_exact_match)
                        : "") +
             "\n";
    else
      out += fmt::format("{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{}\n", r.length, r.mse,
                         r.mean_prediction, r.mean_target, r.mse_reparam, r.n_sequences,
                         r.exact ? 1 : 0, r.n_clamped, r.n_nonfinite);
  }
  return out;
}

std::vector<LengthResult> parse_results_csv(const std::string& text, const std::string& where) {
  if (text.rfind(kTokenResultsHeaderBefore, 0) == 0) return parse_token_results(text, where);
  CsvRows csv(text, where, kResultsHeader, "results");
  std::vector<LengthResult> rows;
  while (csv.next()) {
    LengthResult r;
    r.length = csv.integer(0);
    r.mse = csv.number(1);
    r.mean_prediction = csv.number(2);
    r.mean_target = csv.finite(3);
    r.mse_reparam = csv.number(4);
    r.n_sequences = csv.integer(5);
    r.exact = csv.integer(6) != 0;
    r.n_clamped = csv.integer(7);
    r.n_nonfinite = csv.integer(8);
    // Only predictions that were not finite (n_nonfinite > 0) make the mse +inf, and the mean
    // prediction +inf when none was finite (train/evaluate.cpp); a model output that was not
    // finite (counted there, or clamped by f⁻¹) makes mse_reparam inf or nan. Nothing else does.
    const char* why =
        " (only a row with n_nonfinite > 0 has an infinite mse or mean_prediction, and only one "
        "with n_nonfinite or n_clamped > 0 a non-finite mse_reparam)";
    if (!std::isfinite(r.mse) && (std::isnan(r.mse) || r.mse < 0 || r.n_nonfinite == 0))
      throw csv.not_finite(1, why);
    if (!std::isfinite(r.mean_prediction) &&
        (std::isnan(r.mean_prediction) || r.mean_prediction < 0 || r.n_nonfinite == 0))
      throw csv.not_finite(2, why);
    if (!std::isfinite(r.mse_reparam) && r.n_nonfinite == 0 && r.n_clamped == 0)
      throw csv.not_finite(4, why);
    if (!rows.empty() && r.length <= rows.back().length)
      throw UsageError(fmt::format("{}: length {} after length {}: lengths must ascend",
                                   csv.line_ref(), r.length, rows.back().length));
    rows.push_back(r);
  }
  return rows;
}

std::string positions_csv_text(const LengthResult& r) {
  std::string out = std::string(kPositionsHeader) + "\n";
  for (const PositionResult& p : r.positions)
    out += fmt::format("{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n", r.length, p.position,
                       p.cross_entropy, p.entropy, p.excess(), p.token_accuracy,
                       p.chain_cross_entropy);
  return out;
}

std::vector<PositionResult> parse_positions_csv(const std::string& text, const std::string& where) {
  // Only markov and text runs write positions.csv; text's entropy and chain columns are nan.
  const bool before_pairing = first_line(text) == kPositionsHeaderBefore;
  CsvRows csv(text, where, before_pairing ? kPositionsHeaderBefore : kPositionsHeader, "positions");
  std::vector<PositionResult> rows;
  while (csv.next()) {
    PositionResult p;
    p.position = csv.integer(1);
    p.cross_entropy = csv.finite(2);
    p.entropy = csv.number(3);  // nan unless markov; never infinite
    if (std::isinf(p.entropy))
      throw csv.not_finite(3, " (nan marks a task without an entropy, never inf)");
    if (before_pairing && !std::isnan(p.entropy)) throw excess_before_pairing(where);
    p.token_accuracy = csv.finite(5);
    if (!before_pairing) {
      p.chain_cross_entropy = csv.number(6);  // nan exactly where the entropy is
      if (std::isinf(p.chain_cross_entropy) ||
          std::isnan(p.chain_cross_entropy) != std::isnan(p.entropy))
        throw csv.not_finite(6, " (nan exactly where entropy is nan: a task without a chain)");
    }
    if (p.position != static_cast<int>(rows.size()) + 1)
      throw UsageError(fmt::format("{}: position {} where {} was expected", csv.line_ref(),
                                   p.position, rows.size() + 1));
    rows.push_back(p);
  }
  return rows;
}

std::string attention_csv_text(const std::vector<LengthResult>& results) {
  std::string out = "length,depth,layer,head,entropy,max_prob,logit_std\n";
  for (const LengthResult& r : results) {
    const AttentionStats& a = r.attention;
    const std::string depth = r.depth == kNoDepth ? "" : fmt::format("{:.9g}", r.depth);
    for (int l = 0; l < a.n_layer; ++l)
      for (int h = 0; h < a.n_head; ++h) {
        const size_t i = static_cast<size_t>(l) * a.n_head + h;
        // The logits' spread, from the probe on the first sequences (train/attention_probe.hpp).
        const bool probed = r.logits.n_layer == a.n_layer && r.logits.n_head == a.n_head &&
                            !std::isnan(r.logits.logit_var[i]);
        out += fmt::format("{},{},{},{},{:.9g},{:.9g},{}\n", r.length, depth, l, h, a.entropy[i],
                           a.max_prob[i],
                           probed ? fmt::format("{:.9g}", std::sqrt(r.logits.logit_var[i])) : "");
      }
  }
  return out;
}

void add_attention_csv(const std::string& text, const std::string& where,
                       std::vector<LengthResult>& results) {
  // attention.csv's first columns (train/attention_stats.hpp); later columns are left unread.
  constexpr const char* kAttentionHeader = "length,depth,layer,head,entropy,max_prob";
  std::istringstream in(text);
  std::string header;
  std::getline(in, header);
  if (header.rfind(kAttentionHeader, 0) != 0)
    throw UsageError(fmt::format("{}: not a lenlab attention file (header '{}')", where, header));
  CsvRows csv(text, where, header.c_str(), "attention");
  while (csv.next()) {
    const int layer = csv.integer(2), head = csv.integer(3);
    LengthResult* row = &result_of_row(csv, results);
    AttentionStats& a = row->attention;
    if (layer < 0 || head < 0 || layer > 1024 || head > 65536)
      throw UsageError(
          fmt::format("{}: layer {} head {} out of range", csv.line_ref(), layer, head));
    if (layer >= a.n_layer || head >= a.n_head) {  // grow the [layer × head] grids, keeping values
      const int L = std::max(a.n_layer, layer + 1), H = std::max(a.n_head, head + 1);
      AttentionStats grown;
      grown.n_layer = L;
      grown.n_head = H;
      grown.entropy.assign(static_cast<size_t>(L) * H, std::nan(""));
      grown.max_prob = grown.entropy;
      for (int l = 0; l < a.n_layer; ++l)
        for (int h = 0; h < a.n_head; ++h) {
          grown.entropy[l * H + h] = a.entropy[l * a.n_head + h];
          grown.max_prob[l * H + h] = a.max_prob[l * a.n_head + h];
        }
      a = std::move(grown);
    }
    a.entropy[layer * a.n_head + head] = csv.finite(4);
    a.max_prob[layer * a.n_head + head] = csv.finite(5);
  }
  for (const LengthResult& r : results)
    for (const double v : r.attention.entropy)
      if (std::isnan(v))
        throw UsageError(fmt::format("{}: length {} lacks a layer or head", where, r.length));
}

std::string attention_distance_csv_text(const std::vector<LengthResult>& results) {
  std::string out = "length,depth,layer,head,distance,mean_logit\n";
  for (const LengthResult& r : results) {
    const AttentionLogits& a = r.logits;
    const std::string depth = r.depth == kNoDepth ? "" : fmt::format("{:.9g}", r.depth);
    for (int l = 0; l < a.n_layer; ++l)
      for (int h = 0; h < a.n_head; ++h)
        for (int d = 0; d <= a.max_distance; ++d)
          if (!std::isnan(a.at(l, h, d)))
            out += fmt::format("{},{},{},{},{},{:.9g}\n", r.length, depth, l, h, d, a.at(l, h, d));
  }
  return out;
}

void add_attention_distance_csv(const std::string& text, const std::string& where,
                                std::vector<LengthResult>& results) {
  CsvRows csv(text, where, "length,depth,layer,head,distance,mean_logit", "attention distance");
  while (csv.next()) {
    const int length = csv.integer(0), layer = csv.integer(2), head = csv.integer(3),
              distance = csv.integer(4);
    LengthResult* row = &result_of_row(csv, results);
    AttentionLogits& a = row->logits;
    if (layer < 0 || head < 0 || distance < 0 || distance >= length + 64 || layer > 1024 ||
        head > 65536)
      throw UsageError(fmt::format("{}: layer {}, head {} or distance {} out of range",
                                   csv.line_ref(), layer, head, distance));
    // Grow the [layer, head, distance] grid as rows arrive, keeping what it holds.
    const int L = std::max(a.n_layer, layer + 1), H = std::max(a.n_head, head + 1),
              D = std::max(a.max_distance, distance);
    if (L != a.n_layer || H != a.n_head || D != a.max_distance) {
      AttentionLogits grown;
      grown.n_layer = L;
      grown.n_head = H;
      grown.max_distance = D;
      grown.logit_var.assign(static_cast<size_t>(L) * H, std::nan(""));
      grown.by_distance.assign(static_cast<size_t>(L) * H * (D + 1), std::nan(""));
      for (int l = 0; l < a.n_layer; ++l)
        for (int h = 0; h < a.n_head; ++h)
          for (int d = 0; d <= a.max_distance; ++d)
            grown.by_distance[(static_cast<size_t>(l) * H + h) * (D + 1) + d] = a.at(l, h, d);
      a = std::move(grown);
    }
    a.by_distance[(static_cast<size_t>(layer) * a.n_head + head) * (a.max_distance + 1) +
                  distance] = csv.finite(5);  // a missing distance has no row
  }
}

std::string representation_csv_text(const std::vector<LengthResult>& results) {
  std::string out =
      "length,depth,layer,rows,reference_rows,sliced_w1,js_distance,kl_divergence,reference_std\n";
  for (const LengthResult& r : results) {
    const std::string depth = r.depth == kNoDepth ? "" : fmt::format("{:.9g}", r.depth);
    for (const RepresentationDistance& d : r.representation)
      out += fmt::format("{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g}\n", r.length, depth, d.layer,
                         d.rows, d.reference_rows, d.sliced_w1, d.js_distance, d.kl_divergence,
                         d.reference_std);
  }
  return out;
}

void add_representation_csv(const std::string& text, const std::string& where,
                            std::vector<LengthResult>& results) {
  CsvRows csv(text, where,
              "length,depth,layer,rows,reference_rows,sliced_w1,js_distance,kl_divergence,"
              "reference_std",
              "representation");
  while (csv.next()) {
    LengthResult* row = &result_of_row(csv, results);
    RepresentationDistance d;
    d.layer = csv.integer(2);
    d.rows = csv.integer(3);
    d.reference_rows = csv.integer(4);
    d.sliced_w1 = csv.finite(5);
    d.js_distance = csv.finite(6);
    d.kl_divergence = csv.finite(7);
    d.reference_std = csv.finite(8);
    if (d.layer < 0 || d.layer > 1024)
      throw UsageError(fmt::format("{}: layer {} out of range", csv.line_ref(), d.layer));
    for (const RepresentationDistance& e : row->representation)
      if (e.layer == d.layer)
        throw UsageError(fmt::format("{}: layer {} of length {} a second time", csv.line_ref(),
                                     d.layer, row->length));
    row->representation.push_back(d);
  }
}

std::string untrained_bias_csv_text(const std::vector<LengthResult>& results) {
  std::string out = "length,depth,untrained_pairs\n";
  for (const LengthResult& r : results)
    if (!std::isnan(r.untrained_pairs))
      out += fmt::format("{},{},{:.9g}\n", r.length, depth_cell(r.depth), r.untrained_pairs);
  return out;
}

void add_untrained_bias_csv(const std::string& text, const std::string& where,
                            std::vector<LengthResult>& results) {
  CsvRows csv(text, where, "length,depth,untrained_pairs", "untrained bias");
  while (csv.next()) {
    LengthResult& row = result_of_row(csv, results);
    const double fraction = csv.finite(2);
    if (fraction < 0 || fraction > 1)
      throw UsageError(fmt::format("{}: untrained_pairs {} is not a fraction in [0, 1]",
                                   csv.line_ref(), fraction));
    if (!std::isnan(row.untrained_pairs))
      throw UsageError(fmt::format("{}: length {} a second time", csv.line_ref(), row.length));
    row.untrained_pairs = fraction;
  }
}

std::vector<std::string> in_listing_order(std::vector<std::string> files,
                                          const std::vector<std::string>& order) {
  const auto rank = [&](const std::string& f) {
    return std::find(order.begin(), order.end(), f) - order.begin();
  };
  std::stable_sort(files.begin(), files.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  return files;
}

}  // namespace lenlab
