#pragma once
// Fine-tuning (--init-from RUN_DIR, config key init_from): a run that starts from a finished run's
// weights instead of a fresh model, and trains them with its own steps, learning rate, schedule
// and training lengths (paper 004's pretrain-short, fine-tune-long; its Table 1 and Figure 4b).
//  * The parent is named by its run id (TrainSpec::init_parent) in the child's settings, id and
//    manifest, never by its path: the same fine-tune of the same parent has one id wherever the
//    parent's folder lies. The manifest also records the parent's folder and settings.
//  * The weights must fit: the same shape, encoding, vocabulary and heads. A learned position
//    table is the exception: the parent's rows are kept, and rows past them (a child tested on
//    longer sequences) keep the child's fresh initialisation, N(0, 0.02) as any new table's.
//    Encoding settings that are no parameter (RoPE's scaling, FIRE's starting threshold) are the
//    child's own: fine-tuning with PI or YaRN is the point.
#include <filesystem>
#include <string>
#include <vector>

#include "models/config.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

struct ParentRun {
  std::filesystem::path dir;  // as given
  TrainSpec spec;             // its settings (its manifest's)
  std::string id;             // run_id(spec)
  ModelConfig model;          // model_config(spec)
};

// The run child.init_from names, checked: UsageError naming the folder and the problem when it
// holds no run, an unreadable manifest, a run not completed ("running": still training or
// killed; "diverged": no weights), no weights file, or weights the child's model cannot take
// (another shape, encoding, vocabulary, or a scalar task's model for a token task).
ParentRun load_parent(const TrainSpec& child);

// child with init_parent set to its parent's id (load_parent's checks); child unchanged when it
// names no parent. Every path that trains, names or finds a run calls this first.
TrainSpec with_parent_id(const TrainSpec& child);

// The child's first parameters [parameter_count(child)]: `fresh` (its own initialisation) with
// every tensor replaced by the parent's (a learned position table: its first rows).
std::vector<double> parent_weights(const ParentRun& parent, const ModelConfig& child,
                                   std::vector<double> fresh);

}  // namespace lenlab
