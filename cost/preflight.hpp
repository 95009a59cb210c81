#pragma once
// The cheap first look at one run, before resolve(): a lower bound of its evaluation's work,
// from a few dozen lengths instead of every one, held against --max-time. resolve() checks the
// reparam at every target up to --l-test and the full estimate costs every test length, which
// for `--l-test 1000000` took half a second each, and the live page asks once per field to
// blame: so a run refused anyway is refused here in microseconds (lenlab train, the page and the
// sweeps call it). It refuses only what admit() (cost/admission.hpp) would refuse too: the bound is
// never above the full estimate. Settings it cannot cost (a bad name, a length out of range) are
// left to resolve()'s messages.
#include <vector>

#include "cost/budget.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// Throws UsageError, naming the bound, the limit and the settings that drive it, when even the
// bound is over --max-time. `gpu`: the run trains on the GPU (Device::gpu()), whose rate the
// bound then takes.
void preflight_run(const TrainSpec& spec, const Budget& budget, bool gpu);

// The same for the runs a sweep (lenlab run, reproduce) is about to train, `jobs` at a time: the
// sum of their floors, before each run is resolved (which took half a second per run of
// `l_test = 1000000`).
void preflight_sweep(const std::vector<TrainSpec>& runs, int jobs, const Budget& budget, bool gpu);

}  // namespace lenlab
