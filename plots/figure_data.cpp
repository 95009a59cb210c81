#include "plots/figure_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace lenlab {

FigureSummary summarize_figure(const FigureSpec& figure, const std::vector<uint64_t>& seeds,
                               const std::map<std::string, RunRecord>& runs) {
  FigureSummary out;
  out.spec = &figure;
  for (size_t i = 0; i < figure.values.size(); ++i) {
    FigureLine line;
    line.label = figure.line_label(i);
    const std::vector<uint64_t> line_seeds = figure.line_seeds(i, seeds);
    line.spec = figure.line_spec(i, line_seeds.front());
    for (uint64_t seed : line_seeds) {
      const auto it = runs.find(run_id(figure.line_spec(i, seed)));
      if (it == runs.end() || it->second.status != "completed") {
        ++out.missing_runs;
        continue;
      }
      line.runs.push_back(&it->second);
    }
    // Every length any seed's run was tested at (runs of one line share their lengths; a run cut
    // short has fewer), ascending.
    std::vector<int> lengths;
    for (const RunRecord* r : line.runs)
      for (const LengthResult& x : r->results) lengths.push_back(x.length);
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    for (const int l : lengths) {
      double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
      int n = 0;
      for (const RunRecord* r : line.runs) {
        const auto at =
            std::lower_bound(r->results.begin(), r->results.end(), l,
                             [](const LengthResult& x, int length) { return x.length < length; });
        if (at == r->results.end() || at->length != l) continue;
        const double mse = at->mse;
        sum += mse;
        lo = std::min(lo, mse);
        hi = std::max(hi, mse);
        ++n;
      }
      if (n == 0) continue;
      line.lengths.push_back(l);
      line.mse_mean.push_back(sum / n);
      line.mse_min.push_back(lo);
      line.mse_max.push_back(hi);
    }
    out.lines.push_back(std::move(line));
  }
  return out;
}

std::string figure_csv(const FigureSummary& fig) {
  std::string out =
      "figure,line,run_id,task,pe,reparam,reparam_shift,l_train,l_test,steps,seed,length,mse,"
      "mean_prediction,mean_target,mse_reparam,final_train_loss\n";
  for (const FigureLine& line : fig.lines)
    for (const RunRecord* r : line.runs)
      for (const LengthResult& x : r->results)
        out += fmt::format(
            "{},{},{},{},{},\"{}\",{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n",
            fig.spec->name, line.label, r->id, r->spec.task, r->spec.pe, r->spec.reparam,
            r->spec.reparam_shift, r->spec.l_train, r->spec.l_test, r->spec.steps, r->spec.seed,
            x.length, x.mse, x.mean_prediction, x.mean_target, x.mse_reparam, r->final_train_loss);
  return out;
}

}  // namespace lenlab
