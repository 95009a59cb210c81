// GPU training speed: group steps per second for K models trained at once (K = 1, 8, 32, 96),
// each launched operation by operation and replayed as CUDA graphs (LENLAB_CUDA_GRAPHS=1,
// models/cuda/step_graphs.hpp) side by side, and the wall time of the whole default reproduction
// (`lenlab reproduce`, 3 seeds) on the GPU both ways, beside its dry run's prediction
// (cost/group_time_model.hpp, from rates measured on this GPU).
// Everything runs through the real code paths (lab/run/run_group.hpp,
// lab/experiment/experiment.hpp) into a temporary folder. Prints figures; never passes or fails on
// time.
//   usage: lenlab_cuda_bench [steps per K (default 300)] [--no-reproduce]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "bench/bench_args.hpp"
#include "core/text_file.hpp"
#include "lab/experiment/experiment.hpp"
#include "lab/run/device.hpp"
#include "lab/run/run_group.hpp"
#include "models/cuda/device.hpp"
#include "models/cuda/step_graphs.hpp"

using namespace lenlab;
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// What the trainer reads (models/step_capture.hpp): "1" replays steps as graphs, "0" does not.
void use_graphs(bool on) {
  setenv("LENLAB_CUDA_GRAPHS", on ? "1" : "0", 1);
}

// Trains K default models (length task, NoPE, l_train 10, seeds 1..K) together for `steps`
// steps; returns the group's training steps per second as its manifests record it.
double group_steps_per_second(int K, int steps, const fs::path& dir) {
  std::vector<GroupJob> jobs;
  for (int k = 0; k < K; ++k) {
    TrainSpec spec;
    spec.steps = steps;
    spec.optimizer.warmup_steps = std::min(100, steps);
    spec.seed = k + 1;
    spec.l_test = spec.l_train;  // evaluation is not what is measured here
    spec.eval_samples = 16;
    RunOptions options;
    options.out = dir / fmt::format("K{}-{}", K, k);
    options.overwrite = true;
    jobs.emplace_back(spec, options);
  }
  Device::choose("cuda").train(jobs);
  const auto manifest =
      nlohmann::json::parse(read_text_file(jobs[0].options.out / "manifest.json"));
  return manifest.at("steps_per_second").get<double>();
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 300;
  bool no_reproduce = false;
  CLI::App app{
      "GPU training speed for K = 1, 8, 32, 96 models at once, and the wall time of the "
      "whole default reproduction on the GPU. Prints figures; never fails on time.",
      "lenlab_cuda_bench"};
  add_steps_argument(app, steps, "Training steps per K");
  app.add_flag("--no-reproduce", no_reproduce, "Skip the whole-reproduction timing");
  if (const int rc = parse_bench_args(app, argc, argv); rc >= 0) return rc;
  const bool reproduce = !no_reproduce;
  const cuda::DeviceInfo& gpu = cuda::device_info();
  if (!gpu.available) {
    std::cout << "lenlab_cuda_bench: no GPU: " << gpu.reason << "\n";
    return 0;
  }
  const fs::path dir = fs::temp_directory_path() / "lenlab_cuda_bench";
  fs::remove_all(dir);
  std::cout << fmt::format("device: {}, {} SMs, {:.0f} GiB\n", gpu.label(), gpu.multiprocessors,
                           gpu.memory_gib);
  std::cout << fmt::format(
      "training, default model (2 layers, d 64), batch 64, l_train 10, {} "
      "steps:\n",
      steps);
  use_graphs(false);
  group_steps_per_second(1, std::min(steps, 50), dir);  // warm up: context, cuBLAS handles
  std::cout << "  (as launched: every operation launched on its own; graphs: LENLAB_CUDA_GRAPHS=1, "
               "each step shape captured once and replayed)\n";
  for (int K : {1, 8, 32, 96}) {
    use_graphs(false);
    const double launched = group_steps_per_second(K, steps, dir);
    use_graphs(true);
    const cuda::StepGraphCounts before = cuda::thread_step_graph_counts();
    const double graphs = group_steps_per_second(K, steps, dir);
    const cuda::StepGraphCounts& after = cuda::thread_step_graph_counts();
    std::cout << fmt::format(
        "  K = {:3d} models at once: as launched {:8.1f} steps/s ({:9.0f} model-steps/s), "
        "graphs {:8.1f} steps/s ({:.2f}x; {} steps replayed, {} captured, {} as they are, {} "
        "refused)\n",
        K, launched, launched * K, graphs, graphs / launched, after.replayed - before.replayed,
        after.captured - before.captured, after.eager - before.eager, after.failed - before.failed);
  }
  use_graphs(false);
  if (reproduce) {
    ExperimentOptions o;
    o.out = dir / "reproduce";
    o.config_text = paper_config_text();
    o.config_source = "configs/paper.toml (built in)";
    o.device = "cuda";
    o.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));  // as the CLI
    o.log = &std::cerr;
    // The dry run's prediction first, from the rates it measures on this GPU
    // (cost/group_time_model.hpp): its "predicted:" line beside the wall time measured next.
    ExperimentOptions dry = o;
    std::ostringstream printed;
    dry.dry_run = true;
    dry.print = &printed;
    run_experiment(dry);
    std::istringstream lines(printed.str());
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("predicted:", 0) == 0 || line.rfind("on cuda", 0) == 0)
        std::cout << "  dry run: " << line << "\n";
    for (bool graphs : {false, true}) {
      use_graphs(graphs);
      fs::remove_all(o.out);
      const auto start = std::chrono::steady_clock::now();
      const int rc = run_experiment(o);
      std::cout << fmt::format(
          "whole default reproduction (lenlab reproduce, 3 seeds) on {}, {}: {:.1f} s wall "
          "(exit {})\n",
          gpu.label(), graphs ? "graphs" : "as launched", seconds_since(start), rc);
    }
    use_graphs(false);
  }
  fs::remove_all(dir);
  return 0;
}
