#include "results/run_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/text_file.hpp"

namespace lenlab {

namespace {

constexpr const char* kResultsHeader =
    "length,mse,mean_prediction,mean_target,mse_reparam,n_sequences,exact,n_clamped,n_nonfinite";
constexpr const char* kTokenResultsHeader =
    "length,depth,token_accuracy,exact_match,cross_entropy,excess_ce,n_sequences,n_answer_tokens";
constexpr const char* kPositionsHeader =
    "length,position,cross_entropy,entropy,excess_ce,token_accuracy";

// The rows of a CSV file under `header`, split into cells, each row checked to have as many cells
// as the header (UsageError naming `where` and the line).
class CsvRows {
 public:
  CsvRows(const std::string& text, const std::string& where, const char* header, const char* what)
      : in_(text), where_(where) {
    std::string line;
    std::getline(in_, line);
    if (line != header)
      throw UsageError(fmt::format("{}: not a lenlab {} file (header '{}')", where, what, line));
    n_cells_ = 1 + static_cast<size_t>(std::count(line.begin(), line.end(), ','));
  }
  // The next row's cells; false at the end.
  bool next() {
    std::string line;
    do {
      if (!std::getline(in_, line)) return false;
      ++n_;
    } while (line.empty());
    cells_.clear();
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells_.push_back(cell);
    if (!line.empty() && line.back() == ',') cells_.emplace_back();
    if (cells_.size() != n_cells_)
      throw UsageError(
          fmt::format("{}:{}: expected {} cells, got {}", where_, n_, n_cells_, cells_.size()));
    return true;
  }
  // The whole cell must be a number; strtod also reads "inf" and "nan", how an infinite mse or a
  // missing excess is written.
  double number(size_t i) const {
    char* end = nullptr;
    const double v = std::strtod(cells_[i].c_str(), &end);
    if (cells_[i].empty() || end != cells_[i].c_str() + cells_[i].size())
      throw UsageError(fmt::format("{}:{}: '{}' is not a number", where_, n_, cells_[i]));
    return v;
  }
  int integer(size_t i) const {
    const double v = number(i);
    if (v != std::floor(v) || std::abs(v) > 1e9)
      throw UsageError(fmt::format("{}:{}: '{}' is not an integer", where_, n_, cells_[i]));
    return static_cast<int>(v);
  }
  bool empty(size_t i) const { return cells_[i].empty(); }
  std::string line_ref() const { return fmt::format("{}:{}", where_, n_); }

 private:
  std::istringstream in_;
  std::string where_;
  size_t n_cells_ = 0;
  int n_ = 1;
  std::vector<std::string> cells_;
};

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
  CsvRows csv(text, where, kTokenResultsHeader, "results");
  std::vector<LengthResult> rows;
  while (csv.next()) {
    LengthResult r;
    r.token = true;
    r.length = csv.integer(0);
    r.depth = csv.empty(1) ? kNoDepth : csv.number(1);
    if (r.depth != kNoDepth && !(r.depth >= 0 && r.depth <= 1))
      throw UsageError(fmt::format("{}: depth {} is not in [0, 1]", csv.line_ref(), r.depth));
    r.token_accuracy = csv.number(2);
    r.exact_match = csv.number(3);
    r.cross_entropy = csv.number(4);
    r.excess_ce = csv.number(5);
    r.n_sequences = csv.integer(6);
    r.n_answer_tokens = csv.integer(7);
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

std::string results_csv_text(const std::vector<LengthResult>& rows) {
  const bool token = !rows.empty() && rows.front().token;
  std::string out = std::string(token ? kTokenResultsHeader : kResultsHeader) + "\n";
  for (const LengthResult& r : rows) {
    if (r.token != token)
      throw std::logic_error("results_csv_text: scalar and token results in one file");
    if (token)
      out += fmt::format("{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{}\n", r.length, depth_cell(r.depth),
                         r.token_accuracy, r.exact_match, r.cross_entropy, r.excess_ce,
                         r.n_sequences, r.n_answer_tokens);
    else
      out += fmt::format("{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{}\n", r.length, r.mse,
                         r.mean_prediction, r.mean_target, r.mse_reparam, r.n_sequences,
                         r.exact ? 1 : 0, r.n_clamped, r.n_nonfinite);
  }
  return out;
}

std::vector<LengthResult> parse_results_csv(const std::string& text, const std::string& where) {
  if (text.rfind(kTokenResultsHeader, 0) == 0) return parse_token_results(text, where);
  CsvRows csv(text, where, kResultsHeader, "results");
  std::vector<LengthResult> rows;
  while (csv.next()) {
    LengthResult r;
    r.length = csv.integer(0);
    r.mse = csv.number(1);
    r.mean_prediction = csv.number(2);
    r.mean_target = csv.number(3);
    r.mse_reparam = csv.number(4);
    r.n_sequences = csv.integer(5);
    r.exact = csv.integer(6) != 0;
    r.n_clamped = csv.integer(7);
    r.n_nonfinite = csv.integer(8);
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
    out += fmt::format("{},{},{:.9g},{:.9g},{:.9g},{:.9g}\n", r.length, p.position, p.cross_entropy,
                       p.entropy, p.cross_entropy - p.entropy, p.token_accuracy);
  return out;
}

std::vector<PositionResult> parse_positions_csv(const std::string& text, const std::string& where) {
  CsvRows csv(text, where, kPositionsHeader, "positions");
  std::vector<PositionResult> rows;
  while (csv.next()) {
    PositionResult p;
    p.position = csv.integer(1);
    p.cross_entropy = csv.number(2);
    p.entropy = csv.number(3);
    p.token_accuracy = csv.number(5);
    if (p.position != static_cast<int>(rows.size()) + 1)
      throw UsageError(fmt::format("{}: position {} where {} was expected", csv.line_ref(),
                                   p.position, rows.size() + 1));
    rows.push_back(p);
  }
  return rows;
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
    a.entropy[layer * a.n_head + head] = csv.number(4);
    a.max_prob[layer * a.n_head + head] = csv.number(5);
  }
  for (const LengthResult& r : results)
    for (const double v : r.attention.entropy)
      if (std::isnan(v))
        throw UsageError(fmt::format("{}: length {} lacks a layer or head", where, r.length));
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
                  distance] = csv.number(5);
  }
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
    d.sliced_w1 = csv.number(5);
    d.js_distance = csv.number(6);
    d.kl_divergence = csv.number(7);
    d.reference_std = csv.number(8);
    if (d.layer < 0 || d.layer > 1024)
      throw UsageError(fmt::format("{}: layer {} out of range", csv.line_ref(), d.layer));
    for (const RepresentationDistance& e : row->representation)
      if (e.layer == d.layer)
        throw UsageError(fmt::format("{}: layer {} of length {} a second time", csv.line_ref(),
                                     d.layer, row->length));
    row->representation.push_back(d);
  }
}

PositionBiasValues parse_position_bias_csv(const std::string& text, const std::string& where) {
  CsvRows csv(text, where, "layer,head,distance,bias", "position bias");
  struct Entry {
    int l, h, d;
    double b;
  };
  std::vector<Entry> entries;
  PositionBiasValues out;
  while (csv.next()) {
    const Entry e{csv.integer(0), csv.integer(1), csv.integer(2), csv.number(3)};
    if (e.l < 0 || e.h < 0 || e.d < 0 || e.l > 1024 || e.h > 65536 || e.d > 10'000'000)
      throw UsageError(fmt::format("{}: layer {}, head {} or distance {} out of range",
                                   csv.line_ref(), e.l, e.h, e.d));
    out.n_layer = std::max(out.n_layer, e.l + 1);
    out.n_head = std::max(out.n_head, e.h + 1);
    out.max_distance = std::max(out.max_distance, e.d);
    entries.push_back(e);
  }
  const size_t n = static_cast<size_t>(out.n_layer) * out.n_head * (out.max_distance + 1);
  if (entries.size() != n)
    throw UsageError(fmt::format("{}: {} rows, but {} layers × {} heads × {} distances need {}",
                                 where, entries.size(), out.n_layer, out.n_head,
                                 out.max_distance + 1, n));
  out.values.assign(n, std::nan(""));
  for (const Entry& e : entries)
    out.values[(static_cast<size_t>(e.l) * out.n_head + e.h) * (out.max_distance + 1) + e.d] = e.b;
  for (double v : out.values)
    if (std::isnan(v))
      throw UsageError(fmt::format("{}: a (layer, head, distance) repeats", where));
  return out;
}

std::vector<LengthResult> load_results(const std::filesystem::path& dir) {
  const auto path = dir / "results.csv";
  return parse_results_csv(read_text_file(path), path.string());
}

namespace {

double number_or_nan(const nlohmann::ordered_json& j) {
  return j.is_number() ? j.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// The manifest's "temperature_search" (train/test_time_eval.hpp's temperature_search_json);
// entries of another shape are skipped, as the other optional manifest parts are.
void read_temperature_search(const nlohmann::ordered_json& t, RunRecord& r) {
  if (t.contains("at_bound") && t["at_bound"].is_object())
    for (const auto& [length, bound] : t["at_bound"].items())
      if (bound.is_string()) r.temperature_at_bound[std::stoi(length)] = bound.get<std::string>();
  if (t.contains("chosen") && t["chosen"].is_object())
    for (const auto& [criterion, by_length] : t["chosen"].items())
      if (by_length.is_object())
        for (const auto& [length, tau] : by_length.items())
          r.temperature_chosen[criterion][std::stoi(length)] = number_or_nan(tau);
  if (!t.contains("curve") || !t["curve"].is_array()) return;
  for (const auto& p : t["curve"]) {
    if (!p.is_object() || !p.contains("length") || !p["length"].is_number_integer() ||
        !p.contains("tau") || !p["tau"].is_number())
      continue;
    TemperatureCurvePoint point;
    point.length = p["length"].get<int>();
    point.tau = p["tau"].get<double>();
    for (const auto& [name, value] : p.items())
      if (name != "length" && name != "tau") point.metrics[name] = number_or_nan(value);
    point.max_prob = point.metrics.count("attention_max_prob")
                         ? point.metrics["attention_max_prob"]
                         : std::numeric_limits<double>::quiet_NaN();
    point.entropy = point.metrics.count("attention_entropy")
                        ? point.metrics["attention_entropy"]
                        : std::numeric_limits<double>::quiet_NaN();
    r.temperature_curve.push_back(std::move(point));
  }
}

}  // namespace

std::optional<RunRecord> load_run(const std::filesystem::path& dir, bool with_results) {
  const auto manifest_path = dir / "manifest.json";
  if (!std::filesystem::exists(manifest_path)) return std::nullopt;
  nlohmann::ordered_json m;
  try {
    m = nlohmann::ordered_json::parse(read_text_file(manifest_path));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON ({})", manifest_path.string(), e.what()));
  }
  RunRecord r;
  r.id = dir.filename().string();
  r.spec = spec_from_json(m.value("config", nlohmann::ordered_json::object()), TrainSpec{},
                          manifest_path.string());
  r.status = m.value("status", "");
  r.final_train_loss = m.value("final_train_loss", 0.0);
  r.wall_seconds = m.value("wall_seconds", 0.0);
  r.train_seconds = m.value("train_seconds", 0.0);
  r.eval_seconds = m.value("eval_seconds", 0.0);
  if (m.contains("misalignment") && m["misalignment"].is_object()) {
    const nlohmann::ordered_json& mis = m["misalignment"];
    auto number = [](const nlohmann::ordered_json& j, const char* key) -> std::optional<double> {
      if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
      return std::nullopt;
    };
    r.misalignment = number(mis, "value");
    r.misalignment_divergence = number(mis, "divergence");
    r.misalignment_entropy = number(mis, "entropy");
    if (mis.contains("perfect") && mis["perfect"].is_object()) {
      r.misalignment_perfect = number(mis["perfect"], "value");
      r.misalignment_perfect_divergence = number(mis["perfect"], "divergence");
    }
  }
  if (m.contains("temperature_by_length") && m["temperature_by_length"].is_object())
    for (const auto& [length, tau] : m["temperature_by_length"].items())
      if (tau.is_number()) r.temperature_by_length[std::stoi(length)] = tau.get<double>();
  if (m.contains("temperature_closed_form") && m["temperature_closed_form"].is_object())
    for (const auto& [key, into] :
         {std::pair{"proposition_1_pmax", &r.temperature_pmax_closed_form},
          std::pair{"proposition_2_entropy", &r.temperature_entropy_closed_form}})
      if (m["temperature_closed_form"].contains(key) &&
          m["temperature_closed_form"][key].is_object())
        for (const auto& [length, tau] : m["temperature_closed_form"][key].items())
          (*into)[std::stoi(length)] =
              tau.is_number() ? tau.get<double>() : std::numeric_limits<double>::quiet_NaN();
  if (m.contains("temperature_search") && m["temperature_search"].is_object())
    read_temperature_search(m["temperature_search"], r);
  if (with_results && r.status == "completed") {
    r.results = load_results(dir);
    const auto positions = dir / "positions.csv";
    if (std::filesystem::exists(positions))
      r.positions = parse_positions_csv(read_text_file(positions), positions.string());
    const auto attention = dir / "attention.csv";
    if (std::filesystem::exists(attention))
      add_attention_csv(read_text_file(attention), attention.string(), r.results);
    const auto distance = dir / "attention_distance.csv";
    if (std::filesystem::exists(distance))
      add_attention_distance_csv(read_text_file(distance), distance.string(), r.results);
    const auto bias = dir / "position_bias.csv";
    if (std::filesystem::exists(bias))
      r.position_bias = parse_position_bias_csv(read_text_file(bias), bias.string());
  }
  return r;
}

}  // namespace lenlab
