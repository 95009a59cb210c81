#pragma once
// How long a group of runs takes on a device that trains them together (the GPU: runs that share
// a model shape train as one batched model, lab/run/run_group.hpp), from rates measured on that
// device for the group's model shape (lab/run/group_speed.hpp). Why not a FLOP rate alone: a GPU
// step of these tiny models is bound by its kernel launches (1.1-1.2 ms for one model on an H100,
// about the same for eight), and greedy decoding launches a forward per decoded row, so time is a
// fixed cost per step, per test length and per decoded row, plus the work at the device's rate.
//   training   = steps · (step_s + Σ_runs step FLOPs / train_flops)
//   a length   = length_s + decoded rows · row_s + Σ_runs FLOPs at it / eval_flops
// (--until-fit's checks are lengths too: every training length, each check). The group's runs
// step in lockstep and evaluate a length at once, so the fixed costs are paid once per group;
// runs that differ only in test-time attention train one model (lab/run/run_group.hpp), so their
// training work counts once.
#include <string>
#include <vector>

#include "cost/run_cost.hpp"

namespace lenlab {

// A device's rates for one model shape, in the FLOPs cost/run_cost.hpp counts.
struct GroupSpeed {
  double step_s = 0;       // a training step's fixed cost, whatever the group's work
  double train_flops = 0;  // FLOP/s of the group's step work beyond it
  double length_s = 0;     // a test length's fixed cost (all the group's models at once)
  double row_s = 0;        // a greedily decoded row's fixed cost (--decode greedy)
  double eval_flops = 0;   // FLOP/s of evaluation beyond those
};

// Whether every rate is finite and > 0 and every fixed cost finite and >= 0: what a prediction
// needs (a measurement that is not gives way to the rough estimate of cost/run_cost.hpp).
bool usable(const GroupSpeed& speed);

// The rows greedy decoding steps through at a test length (every row of a sequence, once each):
// 0 unless the run decodes greedily.
double decoded_rows(const CostedRun& run, int length);

struct GroupSeconds {
  double train =
      0;            // every step to --steps (the cap, under --until-fit) and the stop rule's checks
  double eval = 0;  // every test length, greedy decoding included
};

// A group's time at `speed`: `runs` (non-null, one group: the same shape, steps and batch).
GroupSeconds predicted_group_seconds(const std::vector<const CostedRun*>& runs,
                                     const GroupSpeed& speed);

// "a step 1.20 ms + its work at 850 GFLOP/s; a test length 3.1 ms, a decoded row 0.90 ms + its
// work at 600 GFLOP/s": the rates as the dry run prints them.
std::string describe(const GroupSpeed& speed);

}  // namespace lenlab
