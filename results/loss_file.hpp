#pragma once
// loss.csv, a run's training curve: one row per step, `step,lr,loss,grad_norm`, and with the
// misalignment regularizer on a fifth column `misalign`, L_misalign of the step's pairs (the SCE,
// or its divergence part for kind "kl"; loss holds L_train + α·L_misalign). Written by a run's
// folder (lab/run/run_folder.cpp); read back here (the CUDA tests) and by tools/torch_reference.
#include <string>
#include <vector>

#include "train/misalign_regularizer.hpp"
#include "train/trainer.hpp"

namespace lenlab {

// Every number in its shortest form that reads back to the same double, so that another
// implementation's curve can be compared to the last bit.
std::string loss_csv_text(const std::vector<StepLog>& log, const MisalignRegularizer& reg);

// loss.csv's rows (`where` names the file in a UsageError): step, lr, loss and grad_norm. A
// misalign column is checked, not kept: pair_loss is α·L_misalign, and the file holds no α.
std::vector<StepLog> parse_loss_csv(const std::string& text, const std::string& where);

}  // namespace lenlab
