#include "lab/serve/run_queue.hpp"

#include <fmt/format.h>
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/atomic_file.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "cost/run_cost.hpp"
#include "lab/run/run_train.hpp"
#include "lab/serve/fair_queue.hpp"
#include "lab/serve/page_settings.hpp"
#include "lab/serve/run_view.hpp"
#include "results/figure_metric.hpp"
#include "results/figure_setup.hpp"
#include "results/run_record.hpp"

namespace lenlab {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct RunQueue::Run {
  int number = 0;
  std::string id;
  TrainSpec spec;
  std::string label;   // e.g. "length · rope · sqrt · l_train 10 · steps 1000"
  std::string metric;  // what the page draws: results/figure_metric.hpp's default for the task
  std::vector<std::string> owners;  // who submitted it, first first; none: an earlier session's
  std::string state = "queued";
  bool cancel = false;    // asked to stop while training: its next step or length throws
  std::string message;    // why it failed, diverged or was cancelled
  double work_total = 1;  // estimated FLOPs (cost/run_cost.hpp)
  double train_work = 0;  // of which training
  double work_done = 0;
  std::vector<LengthResult> results;  // as scored
};

namespace {

// Thrown from a cancelled run's progress callback: unwinds run_train at its next step or length.
struct RunCancelled {};

bool active(const std::string& state) {
  return state == "queued" || state == "training" || state == "evaluating";
}

bool owned_by(const std::vector<std::string>& owners, const std::string& owner) {
  return std::find(owners.begin(), owners.end(), owner) != owners.end();
}

}  // namespace

RunQueue::RunQueue(RunQueueOptions options) : options_(std::move(options)) {
  if (options_.max_running < 1 || options_.max_queued < 1)
    throw UsageError(
        fmt::format("lenlab serve: --max-running ({}) and --max-queued ({}) must be "
                    "at least 1",
                    options_.max_running, options_.max_queued));
  // Every run trains on one thread (page_base_spec): set Eigen's process-wide count once here,
  // so that workers side by side never write it (as lab/experiment/sweep.cpp does).
  Eigen::setNbThreads(1);
  restore_finished_runs();
  for (int i = 0; i < options_.max_running; ++i) workers_.emplace_back([this] { work(); });
}

RunQueue::~RunQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queued_.clear();
  }
  changed_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void RunQueue::restore_finished_runs() {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, RunRecord>> found;
  for (const auto& entry : fs::directory_iterator(options_.out / "runs", ec)) {
    try {
      auto record = load_run(entry.path());
      if (record && (record->status == "completed" || record->status == "diverged"))
        found.emplace_back(fs::last_write_time(entry.path() / "manifest.json"), std::move(*record));
    } catch (const std::exception&) {  // a folder that cannot be read back: not listed, as in
    }                                  // lenlab plot, and trained again if submitted
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first, a.second.id) < std::tie(b.first, b.second.id);
  });
  for (auto& [when, record] : found) {
    auto run = std::make_unique<Run>();
    run->number = static_cast<int>(runs_.size()) + 1;
    run->id = record.id;
    run->spec = record.spec;
    run->label = run_label(record.spec, options_.corpora);
    run->metric = default_metric(parse_task(record.spec.task));
    run->state = record.status;
    run->results = std::move(record.results);
    run->work_done = run->work_total;
    if (record.status == "diverged") run->message = "training diverged (an earlier session)";
    runs_.push_back(std::move(run));
  }
  if (!runs_.empty()) write_experiment_config();
}

int RunQueue::submit(const TrainSpec& spec, const std::string& owner, int limit) {
  const std::string id = run_id(spec);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto check_limit = [&] {
    if (limit <= 0) return;
    const auto mine = std::count_if(runs_.begin(), runs_.end(), [&](const auto& run) {
      return active(run->state) && owned_by(run->owners, owner);
    });
    if (mine >= limit)
      throw OwnerLimit(fmt::format(
          "you have {} runs queued or training, the limit per student in this class (lenlab "
          "serve --runs-per-student {}): wait until one finishes",
          mine, limit));
  };
  // The same settings again: the same run, unless it failed or was cancelled.
  for (const auto& run : runs_)
    if (run->id == id && run->state != "failed" && run->state != "cancelled") {
      if (!owned_by(run->owners, owner)) {
        if (active(run->state)) check_limit();
        run->owners.push_back(owner);
      }
      return run->number;
    }
  check_limit();
  if (!open_) throw QueueFull("the teacher has closed the queue: no new runs for now");
  if (static_cast<int>(queued_.size()) >= options_.max_queued)
    throw QueueFull(fmt::format(
        "the queue is full: {} runs are waiting (lenlab serve --max-queued {}); try again when "
        "one has started",
        queued_.size(), options_.max_queued));
  auto run = std::make_unique<Run>();
  run->number = static_cast<int>(runs_.size()) + 1;
  run->id = id;
  run->spec = spec;
  run->owners = {owner};
  run->label = run_label(spec, options_.corpora);
  run->metric = default_metric(parse_task(spec.task));
  const RunCost cost = estimate_run_cost(spec, resolve(spec).model);
  run->work_total = std::max(1.0, cost.flops());
  run->train_work = cost.train_flops;
  // A finished folder from an earlier session is read back, not trained again.
  if (const auto record = load_run(options_.out / "runs" / id);
      record && (record->status == "completed" || record->status == "diverged")) {
    run->state = record->status;
    run->results = record->results;
    run->work_done = run->work_total;
    if (record->status == "diverged") run->message = "training diverged (an earlier session)";
  }
  const int number = run->number;
  const bool queued = run->state == "queued";
  runs_.push_back(std::move(run));
  if (queued) {
    queued_.push_back(number);
    changed_.notify_all();
  } else {
    write_experiment_config();
  }
  return number;
}

void RunQueue::work() {
  for (;;) {
    Run* run = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
      if (stopping_) return;
      const int next = start_order().front();
      run = runs_[next - 1].get();
      queued_.erase(std::find(queued_.begin(), queued_.end(), next));
      ++started_[run->owners.front()];
      run->state = "training";
      ++training_;
    }
    changed_.notify_all();
    train(*run);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --training_;
      try {  // a worker that threw would end the program
        write_experiment_config();
      } catch (const std::exception& e) {
        run->message = fmt::format("saved, but not listed for lenlab plot: {}", e.what());
      }
    }
    changed_.notify_all();
  }
}

void RunQueue::train(Run& run) {
  RunOptions o;
  o.out = options_.out / "runs" / run.id;
  o.overwrite = true;  // a folder a killed session left holds a "running" manifest
  o.command_line = "lenlab serve (the live page)";
  o.device = options_.device;
  o.budget = options_.budget;
  o.on_work_done = [&](double flops) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (run.cancel) throw RunCancelled();
    run.work_done += flops;
    if (run.work_done > run.train_work * (1 + 1e-9)) run.state = "evaluating";
  };
  o.on_result = [&](const LengthResult& r) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (run.cancel) throw RunCancelled();
    run.state = "evaluating";
    run.results.push_back(r);
  };
  std::string state, message;
  bool cancelled = false;
  try {
    const int code = run_train(run.spec, o);
    state = code == kExitDiverged ? "diverged" : "completed";
    if (code == kExitDiverged)
      message = "training diverged (the loss became non-finite); its manifest says at which step";
  } catch (const RunCancelled&) {
    cancelled = true;
  } catch (const std::exception& e) {  // a UsageError the page's check missed, or the machine
    state = "failed";
    message = e.what();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (cancelled) {
    run.state = "cancelled";  // its message was set by cancel()
    return;
  }
  run.state = state;
  run.message = message;
  if (state != "failed") run.work_done = run.work_total;
}

Json RunQueue::to_json(const Run& run) const {
  Json j = {{"number", run.number},
            {"id", run.id},
            {"label", run.label},
            {"owners", run.owners},
            {"settings", for_clients(lenlab::to_json(run.spec), options_.corpora)},
            {"state", run.state}};
  if (run.state == "queued") {
    const std::vector<int> order = start_order();
    const auto it = std::find(order.begin(), order.end(), run.number);
    j["queue_position"] = static_cast<int>(it - order.begin()) + 1;
  }
  const double progress = std::clamp(run.work_done / run.work_total, 0.0, 1.0);
  j["progress"] = progress;
  if (run.state == "training")
    j["phase"] = fmt::format("training, {:.0f}%",
                             100 * std::min(1.0, run.work_done / std::max(1.0, run.train_work)));
  else if (run.state == "evaluating")
    j["phase"] = fmt::format("evaluating, length {} of {}",
                             run.results.empty() ? 0 : run.results.back().length, run.spec.l_test);
  else
    j["phase"] = run.state;
  if (!run.message.empty()) j["message"] = run.message;
  j["metric"] = run.metric;
  j["metric_label"] = metric_label(run.metric);
  j["l_train"] = run.spec.l_train;
  j["l_test"] = run.spec.l_test;
  j["results"] = curve(run.results, run.metric);
  return j;
}

std::optional<Json> RunQueue::run_json(int number) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (number < 1 || number > static_cast<int>(runs_.size())) return std::nullopt;
  return to_json(*runs_[number - 1]);
}

Json RunQueue::runs_json(const std::optional<std::string>& owner) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Json runs = Json::array();
  for (const auto& run : runs_)
    if (!owner || owned_by(run->owners, *owner)) runs.push_back(to_json(*run));
  return {{"runs", runs}};
}

std::string RunQueue::results_csv(const std::optional<std::string>& owner) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string csv = "student,run,id,label,metric,l_train,length,value\n";
  for (const auto& run : runs_) {
    if (run->state != "completed" && run->state != "diverged") continue;
    // One block of rows per owner asked for; a run an earlier session left has none ("").
    std::vector<std::string> names =
        run->owners.empty() ? std::vector<std::string>{""} : run->owners;
    if (owner)
      names = owned_by(run->owners, *owner) ? std::vector<std::string>{*owner}
                                            : std::vector<std::string>{};
    for (const std::string& name : names)
      for (const Json& point : curve(run->results, run->metric))
        csv += fmt::format(
            "{},{},{},{},{},{},{},{}\n", csv_quoted(name), run->number, run->id,
            csv_quoted(run->label), run->metric, run->spec.l_train, point["length"].get<int>(),
            point["value"].is_null() ? std::string("nan")
                                     : fmt::format("{}", point["value"].get<double>()));
  }
  return csv;
}

std::string RunQueue::cancel(int number, const std::string& by) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (number < 1 || number > static_cast<int>(runs_.size()))
      return fmt::format("no run {}", number);
    Run& run = *runs_[number - 1];
    if (!active(run.state))
      return fmt::format("run {} is {}: only a queued or training run can be cancelled", number,
                         run.state);
    run.message = "cancelled by " + by;
    if (run.state == "queued") {
      queued_.erase(std::find(queued_.begin(), queued_.end(), number));
      run.state = "cancelled";
    } else {
      run.cancel = true;  // the worker sets the state when its run_train has unwound
    }
  }
  changed_.notify_all();
  return "";
}

void RunQueue::set_open(bool open) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_ = open;
}

bool RunQueue::is_open() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_;
}

std::vector<int> RunQueue::start_order() const {
  std::vector<QueuedRun> queued;
  for (const int number : queued_) queued.push_back({number, runs_[number - 1]->owners.front()});
  return fair_order(queued, started_);
}

std::optional<fs::path> RunQueue::finished_folder(int number) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (number < 1 || number > static_cast<int>(runs_.size())) return std::nullopt;
  const Run& run = *runs_[number - 1];
  if (run.state != "completed" && run.state != "diverged") return std::nullopt;
  return options_.out / "runs" / run.id;
}

FinishedRun RunQueue::completed_run(int number) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (number < 1 || number > static_cast<int>(runs_.size())) return {};
  const Run& run = *runs_[number - 1];
  return {run.state, run.state == "completed" ? options_.out / "runs" / run.id : fs::path()};
}

int RunQueue::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(runs_.size());
}

void RunQueue::wait_until_idle() const {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queued_.empty() && training_ == 0; });
}

void RunQueue::write_experiment_config() const {
  std::vector<std::pair<std::string, TrainSpec>> finished;
  for (const auto& run : runs_)
    if (run->state == "completed" || run->state == "diverged")
      finished.emplace_back(fmt::format("#{} {}", run->number, run->label), run->spec);
  if (finished.empty()) return;
  write_file_atomic(options_.out / "config.toml", served_experiment_config(finished));
  Json names = Json::array();
  std::set<std::string> seen;
  for (const auto& [label, spec] : finished) {
    const std::string name = served_figure_name(spec);
    if (seen.insert(name).second) names.push_back(name);
  }
  write_file_atomic(
      options_.out / "selection.json",
      Json{{"figures", names}, {"seeds", {1}}, {"figure_seeds", true}}.dump(2) + "\n");
}

}  // namespace lenlab
