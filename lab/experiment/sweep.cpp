#include "lab/experiment/sweep.hpp"

#include <fmt/format.h>
#include <Eigen/Core>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "cost/run_cost.hpp"
#include "lab/run/run_group.hpp"
#include "lab/run/run_train.hpp"
#include "results/run_record.hpp"
#include "tasks/text_corpus.hpp"

namespace lenlab {

namespace {
// What unwinds a worker's run once SweepOptions::on_tick has thrown.
struct Interrupted {};
}  // namespace

SweepOutcome run_sweep(const std::vector<PlannedRun>& runs, const std::filesystem::path& runs_dir,
                       const SweepOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  SweepOutcome outcome;
  std::vector<const PlannedRun*> todo;
  double total_flops = 0;  // the progress bar counts work, so its ETA weighs long runs as such
  const auto costed = [&](const PlannedRun& run) -> const CostedRun* {
    const auto it = options.costed.find(run.id);
    return it == options.costed.end() ? nullptr : it->second;
  };
  for (const PlannedRun& run : runs) {
    if (!costed(run)) resolve(run.spec);  // fail before anything starts
    const std::optional<RunRecord> found = load_run(runs_dir / run.id);
    if (found && (found->status == "completed" || found->status == "diverged")) {
      if (canonical_spec_text(found->spec) != canonical_spec_text(run.spec))
        throw UsageError(fmt::format(
            "{} holds a run with other settings than the one planned under that id; remove it "
            "or choose another --out",
            (runs_dir / run.id).string()));
      if (task_reads_corpus(parse_task(run.spec.task))) {
        // A finished text run belongs to the text it was trained on: a changed corpus would mix
        // old runs with new ones in the figures (lenlab eval refuses it the same way).
        const std::string now = open_corpus(run.spec.token.corpus)->hash();
        if (found->corpus_hash != now)
          throw UsageError(fmt::format(
              "{} was trained on a corpus with hash {}, but {} now has hash {}; restore the file "
              "or choose another --out",
              (runs_dir / run.id).string(),
              found->corpus_hash.empty() ? "none" : found->corpus_hash,
              open_corpus(run.spec.token.corpus)->path(), now));
      }
      ++outcome.skipped;
      outcome.diverged += found->status == "diverged";
      continue;
    }
    todo.push_back(&run);
    const CostedRun* c = costed(run);
    total_flops +=
        c ? c->cost.flops() : estimate_run_cost(run.spec, resolve(run.spec).model).flops();
  }

  // Fine-tunes wait for their parents: generation 0 has no parent left to train, generation g + 1
  // fine-tunes a run of generation g (plan_runs puts parents first, so one pass finds them).
  std::map<std::string, int> generation_of;
  int generations = 1;
  for (const PlannedRun* run : todo) {
    const auto parent = generation_of.find(run->parent);
    const int g = run->parent.empty() || parent == generation_of.end() ? 0 : parent->second + 1;
    generation_of[run->id] = g;
    generations = std::max(generations, g + 1);
  }
  auto generation = [&](const PlannedRun* run) { return generation_of.at(run->id); };

  const Device& device = options.device;
  // Work items: one run each on the CPU; on the GPU, groups of runs that train together.
  std::vector<std::vector<const PlannedRun*>> items;
  if (device.gpu()) {
    items = gpu_groups(todo, [&](const PlannedRun* run) {
      return std::to_string(generation(run)) + " " + gpu_group_key(run->spec);
    });
  } else {  // runs that differ only in their test-time attention: one training (one parent)
    std::map<std::string, size_t> item_of;
    for (const PlannedRun* run : todo) {
      const auto [it, fresh] = item_of.emplace(training_spec_text(run->spec), items.size());
      if (fresh) items.emplace_back();
      items[it->second].push_back(run);
    }
  }

  // Generation by generation (the order above kept within each).
  std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
    return generation(a[0]) < generation(b[0]);
  });
  // Items of each generation not yet finished; an item of generation g starts once g − 1 has none.
  std::vector<std::atomic<int>> unfinished(generations);
  for (const auto& item : items) ++unfinished[generation(item[0])];

  std::atomic<double> flops_done{0};
  std::atomic<size_t> next{0};
  std::atomic<int> finished{0}, diverged{0};
  std::atomic<bool> stop{false}, interrupted{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    while (!stop) {
      const size_t i = next++;
      if (i >= items.size()) return;
      const int g = generation(items[i][0]);
      while (g > 0 && unfinished[g - 1] > 0 && !stop)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (stop) return;
      std::vector<GroupJob> group;
      for (const PlannedRun* run : items[i]) {
        TrainSpec spec = run->spec;
        if (!run->parent.empty()) spec.init_from = (runs_dir / run->parent).string();
        RunOptions ro;
        ro.out = runs_dir / run->id;
        ro.overwrite = true;  // a folder left by a killed run holds a "running" manifest
        ro.command_line = "lenlab sweep run " + run->id;
        ro.on_work_done = [&](double flops) {
          flops_done += flops;
          if (interrupted) throw Interrupted();  // on_tick threw: unwind this run
        };
        if (const CostedRun* c = costed(*run))
          group.emplace_back(spec, c->resolved, ro);
        else
          group.emplace_back(spec, ro);
      }
      try {
        for (int code : device.train(group)) {
          diverged += code == kExitDiverged;
          ++finished;
        }
        --unfinished[g];
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        stop = true;
      }
    }
  };
  // On the GPU, each worker trains one group at a time on its own stream, so groups overlap.
  const int jobs = std::max(1, std::min<int>(options.jobs, static_cast<int>(items.size())));
  // Sweep runs use one thread each (threads = 1 in configs/paper.toml): set Eigen's process-wide
  // count once here, so that run_train finds it set and never writes it from several threads.
  Eigen::setNbThreads(1);
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs && !todo.empty(); ++j) threads.emplace_back(worker);

  std::optional<Progress> bar;
  if (options.log && !todo.empty()) {
    if (device.gpu())
      *options.log << fmt::format(
          "{} runs to train on {} in {} group(s), {} at a time; {} already on disk\n", todo.size(),
          device.label(), items.size(), jobs, outcome.skipped);
    else
      *options.log << fmt::format("{} runs to train on {} worker(s); {} already on disk\n",
                                  todo.size(), jobs, outcome.skipped);
    bar.emplace("runs", static_cast<int64_t>(total_flops / kFlopsPerProgressUnit) + 1, *options.log,
                options.log_is_tty);
    bar->show_counts(false);
  }
  std::exception_ptr tick_error;
  while (!stop && finished < static_cast<int>(todo.size())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (options.on_tick) {
      try {
        options.on_tick(total_flops > 0 ? std::min(1.0, flops_done / total_flops) : 0.0);
      } catch (...) {
        tick_error = std::current_exception();
        interrupted = true;
        stop = true;
        break;
      }
    }
    if (bar)
      bar->update(static_cast<int64_t>(flops_done / kFlopsPerProgressUnit),
                  fmt::format("{}/{} runs", finished.load(), todo.size()));
  }
  for (std::thread& t : threads) t.join();
  if (tick_error) std::rethrow_exception(tick_error);
  if (error) std::rethrow_exception(error);
  if (bar) bar->finish(fmt::format("{}/{} runs", finished.load(), todo.size()));

  outcome.ran = finished;
  outcome.diverged += diverged;
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace lenlab
