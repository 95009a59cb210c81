#pragma once
// The live page's runs: a queue of training runs, a bounded number training at once, each written
// into <out>/runs/<run id>/ like any other run (lab/run/run_train.hpp), and each one's state,
// progress and results so far for the page to poll. Thread-safe: the HTTP server calls it from its
// own threads while the workers train.
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cost/budget.hpp"
#include "lab/serve/run_view.hpp"
#include "lab/serve/server_paths.hpp"
#include "train/evaluate.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

struct RunQueueOptions {
  std::filesystem::path out;   // runs go to out/runs/<id>; out/config.toml lists the finished
                               // (made by the first run)
  int max_running = 1;         // runs training at once
  int max_queued = 64;         // runs waiting; more is refused (QueueFull)
  std::string device = "cpu";  // lab/run/device.hpp
  Budget budget;               // each run's limit (the page checks it on submission)
  // The corpora offered by name (lab/serve/server_paths.hpp), name → file: a run's settings show
  // its corpus by name, never its path.
  std::map<std::string, std::string> corpora;
};

// submit() when max_queued runs are already waiting, or the queue is closed (503).
struct QueueFull : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// submit() when the owner already has their limit of runs queued or training (429).
struct OwnerLimit : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RunQueue {
 public:
  // Runs an earlier session left finished in options.out/runs/ (completed or diverged) are listed
  // first, numbered in the order they finished: config.toml keeps them and the page shows them.
  explicit RunQueue(RunQueueOptions options);
  // Waits for the runs in training to finish; queued runs are dropped (their folders never made).
  ~RunQueue();
  RunQueue(const RunQueue&) = delete;
  RunQueue& operator=(const RunQueue&) = delete;

  // Queues a run (spec already checked: lab/serve/page_settings.hpp) for `owner` (a student's
  // name; "" for the local user or the teacher) and returns its number (1, 2, …). The same
  // settings submitted again give the same run: the one already queued, training or finished, or
  // the completed folder another process left since (read back, not retrained); a second owner
  // then shares it. `limit` > 0: the owner may have at most that many runs queued or training
  // (OwnerLimit). QueueFull when max_queued runs wait or the queue is closed.
  int submit(const TrainSpec& spec, const std::string& owner = "", int limit = 0);

  // Stops a queued run (it never starts) or one training or evaluating (at its next step or
  // length; its folder keeps a "running" manifest, as a killed run's): state "cancelled",
  // message "cancelled by <by>". Returns "" or why it cannot be (unknown, already finished).
  std::string cancel(int number, const std::string& by);

  // Whether submit() queues new runs (the teacher closes the queue at the end of an exercise).
  void set_open(bool open);
  bool is_open() const;

  // A run as the page sees it (GET /api/runs/N): number, id, label, owners (the names that
  // submitted it; none for a run an earlier session left), settings, state (queued, training,
  // evaluating, completed, diverged, failed, cancelled), queue_position while queued (1 = next, in
  // the fair order of lab/serve/fair_queue.hpp),
  // progress in [0, 1], phase, message (failed or diverged), metric and its label, l_train,
  // l_test, and results so far as [{length, value}] (passkey: the mean over its depths; a value
  // that is not finite is null). nullopt for an unknown number.
  std::optional<nlohmann::ordered_json> run_json(int number) const;
  // {"runs": [...]} in submission order: all, or those `owner` submitted.
  nlohmann::ordered_json runs_json(const std::optional<std::string>& owner = std::nullopt) const;
  // The page's curves of the finished runs (all, or `owner`'s) as one CSV in long form:
  // student,run,id,label,metric,l_train,length,value.
  std::string results_csv(const std::optional<std::string>& owner = std::nullopt) const;
  // The run's folder once it is completed or diverged; nullopt otherwise.
  std::optional<std::filesystem::path> finished_folder(int number) const;
  // The run's state ("" for an unknown number) and, when completed, its folder (init_from).
  FinishedRun completed_run(int number) const;
  int size() const;  // runs listed, 1..size() their numbers
  // Blocks until nothing is queued or training (tests).
  void wait_until_idle() const;

 private:
  struct Run;
  void restore_finished_runs();  // before the workers start
  void work();
  void train(Run& run);
  void write_experiment_config() const;  // with mutex_ held: out/config.toml, selection.json
  nlohmann::ordered_json to_json(const Run& run) const;
  std::vector<int> start_order() const;  // with mutex_ held: the queued runs, next first

  RunQueueOptions options_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<std::unique_ptr<Run>> runs_;  // by number − 1
  std::deque<int> queued_;                  // numbers, first = next
  int training_ = 0;
  std::map<std::string, int> started_;  // runs started, by owner (fairness)
  bool open_ = true;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace lenlab
