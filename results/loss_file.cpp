#include "results/loss_file.hpp"

#include <fmt/format.h>

#include <cmath>

#include "results/csv_rows.hpp"

namespace lenlab {

namespace {
constexpr const char* kHeader = "step,lr,loss,grad_norm";
constexpr const char* kMisalignHeader = "step,lr,loss,grad_norm,misalign";
}  // namespace

std::string loss_csv_text(const std::vector<StepLog>& log, const MisalignRegularizer& reg) {
  std::string out = fmt::format("{}\n", reg.on() ? kMisalignHeader : kHeader);
  for (const StepLog& s : log) {
    out += fmt::format("{},{},{},{}", s.step, s.lr, s.loss, s.grad_norm);
    out += reg.on() ? fmt::format(",{}\n", s.pair_loss / reg.alpha) : "\n";
  }
  return out;
}

std::vector<StepLog> parse_loss_csv(const std::string& text, const std::string& where) {
  const bool misalign = text.rfind(fmt::format("{}\n", kMisalignHeader), 0) == 0;
  CsvRows rows(text, where, misalign ? kMisalignHeader : kHeader, "loss");
  std::vector<StepLog> log;
  // A run that diverged logs the step whose loss or gradient norm was not finite, and stops
  // there (lab/run/run_folder.cpp's write_diverged): such a value is only ever the last row's.
  std::string diverged;  // the refusal for a non-finite row, thrown if another row follows
  const char* why = " (only the last step of a run that diverged may be nan or inf)";
  while (rows.next()) {
    if (!diverged.empty()) throw UsageError(diverged);
    StepLog s{};
    s.step = rows.integer(0);
    s.lr = rows.finite(1);
    s.loss = rows.number(2);
    s.grad_norm = rows.number(3);
    if (misalign) rows.number(4);
    for (const size_t i : {size_t{2}, size_t{3}})
      if (!std::isfinite(rows.number(i))) diverged = rows.not_finite(i, why).what();
    if (misalign && !std::isfinite(rows.number(4))) diverged = rows.not_finite(4, why).what();
    log.push_back(s);
  }
  return log;
}

}  // namespace lenlab
