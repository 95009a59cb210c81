#include "results/loss_file.hpp"

#include <fmt/format.h>

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
  while (rows.next()) {
    StepLog s{};
    s.step = rows.integer(0);
    s.lr = rows.number(1);
    s.loss = rows.number(2);
    s.grad_norm = rows.number(3);
    if (misalign) rows.number(4);
    log.push_back(s);
  }
  return log;
}

}  // namespace lenlab
