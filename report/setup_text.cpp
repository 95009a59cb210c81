#include "report/setup_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace lenlab {

std::string setup_text(const TrainSpec& s, bool with_pe, bool with_l_train) {
  return fmt::format("{}{}, {} layers × d_model {}, {} steps{}", s.task,
                     with_pe ? " with " + s.pe : "", s.n_layer, s.d_model, s.steps,
                     with_l_train ? fmt::format(", l_train {}", s.l_train) : "");
}

FigureRuns figure_runs(const FigureSummary& f) {
  FigureRuns r;
  r.fewest = f.lines.empty() ? 0 : f.lines.front().runs.size();
  for (const FigureLine& l : f.lines) {
    r.runs.insert(r.runs.end(), l.runs.begin(), l.runs.end());
    r.fewest = std::min(r.fewest, l.runs.size());
    r.most = std::max(r.most, l.runs.size());
  }
  return r;
}

std::string seeds_per_line_text(const FigureRuns& r) {
  if (r.fewest == r.most) return fmt::format("{} seed{}", r.most, r.most == 1 ? "" : "s");
  return fmt::format("{}–{} seeds", r.fewest, r.most);
}

int longest_length(const std::vector<const RunRecord*>& runs) {
  int longest = 0;
  for (const RunRecord* r : runs)
    for (const LengthResult& row : r->results) longest = std::max(longest, row.length);
  return longest;
}

std::string beyond_range_text(int l_train, int longest) {
  return fmt::format("lengths {}..{} = (1×, {:.3g}×] l_train", l_train + 1, longest,
                     static_cast<double>(longest) / l_train);
}

std::string seed_list(const std::vector<uint64_t>& seeds) {
  if (seeds.empty()) return "none";
  return fmt::format("seed{} {}", seeds.size() > 1 ? "s" : "", fmt::join(seeds, ", "));
}

}  // namespace lenlab
