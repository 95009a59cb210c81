#include "lab/experiment/slurm_submit.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/progress.hpp"
#include "core/text_file.hpp"
#include "lab/run/run_train.hpp"
#include "plots/run_program.hpp"
#include "results/run_record.hpp"

namespace lenlab {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

fs::path find_slurm_program(const std::string& program) {
  if (const std::optional<fs::path> found = find_program(program)) return *found;
  throw UsageError(fmt::format(
      "--slurm submits the runs with Slurm's {}, and there is no {} on PATH; run it on the "
      "cluster's login node, or write the job script here with --emit-slurm DIR and submit it "
      "there with sbatch",
      program, program));
}

void check_slurm_options(const ExperimentOptions& o) {
  if (o.slurm && (!o.emit_slurm.empty() || o.run_index >= 0))
    throw UsageError(fmt::format(
        "--slurm writes its job script into --out's slurm/ folder, submits it and watches it; it "
        "cannot be combined with {}: choose one",
        o.emit_slurm.empty() ? "--run-index (what its array tasks run)" : "--emit-slurm"));
  if (!o.slurm &&
      (!o.sbatch_args.empty() || o.slurm_poll_seconds != ExperimentOptions{}.slurm_poll_seconds))
    throw UsageError(fmt::format("{} is for --slurm, which is not given",
                                 o.sbatch_args.empty() ? "--slurm-poll" : "--sbatch-arg"));
  if (!(o.slurm_poll_seconds >= 0.1 && o.slurm_poll_seconds <= 3600))
    throw UsageError(fmt::format(
        "--slurm-poll must be a number of seconds from 0.1 to 3600, got {}", o.slurm_poll_seconds));
  if (o.slurm) {
    find_slurm_program("sbatch");
    find_slurm_program("squeue");
  }
}

std::string array_ranges(const std::vector<int>& tasks) {
  std::string out;
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", tasks[i]) : fmt::format("{}-{}", tasks[i], tasks[j]);
    i = j + 1;
  }
  return out;
}

std::vector<QueuedTask> parse_squeue(const std::string& text) {
  std::vector<QueuedTask> tasks;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string id, state;
    if (!(words >> id >> state)) continue;
    // A pending array's record not split into tasks yet reads "3-7" or "3,5": count each id.
    std::istringstream parts(id);
    std::string part;
    while (std::getline(parts, part, ',')) {
      int first = 0, last = 0;
      char dash = 0;
      std::istringstream range(part);
      if (!(range >> first)) continue;
      last = (range >> dash >> last) && dash == '-' ? last : first;
      for (int t = first; t <= last; ++t) tasks.push_back({t, state});
    }
  }
  return tasks;
}

namespace {

// The last line of `text` that holds `needle`, trimmed; empty when none does.
std::string last_line_with(const std::string& text, const std::string& needle) {
  std::istringstream lines(text);
  std::string line, found;
  while (std::getline(lines, line))
    if (line.find(needle) != std::string::npos) found = line;
  const size_t start = found.find_first_not_of(" \t");
  return start == std::string::npos ? "" : found.substr(start);
}

}  // namespace

SlurmLimits asked_limits(SlurmLimits limits, const std::vector<std::string>& sbatch_args) {
  for (const std::string& a : sbatch_args) {
    if (a.rfind("--mem=", 0) == 0) limits.mem = a.substr(6) + " (from --sbatch-arg)";
    if (a.rfind("--time=", 0) == 0) limits.time = a.substr(7) + " (from --sbatch-arg)";
  }
  return limits;
}

std::string slurm_task_failure(const std::string& log_text, const SlurmLimits& asked) {
  if (const std::string line = last_line_with(log_text, "DUE TO TIME LIMIT"); !line.empty())
    return fmt::format(
        "Slurm stopped it at its time limit, --time={}; give it more with "
        "--sbatch-arg=--time=D-HH:MM:SS. Slurm's words: {}",
        asked.time, line);
  // slurmstepd's "exceeded memory limit (<used> > <limit>)" says by how much: preferred.
  for (const char* memory : {"exceeded memory limit", "xceeded job memory limit", "oom-kill",
                             "OUT_OF_MEMORY", "Out Of Memory"})
    if (const std::string line = last_line_with(log_text, memory); !line.empty())
      return fmt::format(
          "Slurm killed it for using more memory than its --mem={}; give it more with "
          "--sbatch-arg=--mem=SIZE. Slurm's words: {}",
          asked.mem, line);
  if (const std::string line = last_line_with(log_text, "CANCELLED"); !line.empty())
    return "it was cancelled (scancel, or the cluster's administrators): " + line;
  if (const std::string line = last_line_with(log_text, "lenlab: error:"); !line.empty())
    return line;
  std::string last;  // whatever the task wrote last
  std::istringstream lines(log_text);
  for (std::string line; std::getline(lines, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last.empty() ? "it ended without finishing its run and left an empty log"
                      : "it ended without finishing its run; its log ends: " + last;
}

namespace {

// What squeue says of job `job_id`: its tasks still queued; nullopt when squeue failed (the
// controller busy or unreachable) and the caller should ask again. A job Slurm no longer knows
// has no tasks queued.
std::optional<std::vector<QueuedTask>> queued_tasks(const fs::path& squeue,
                                                    const std::string& job_id) {
  const ProgramOutput r =
      run_program_capture(squeue, ".", {"-h", "-r", "-j", job_id, "-o", "%K %T"});
  if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) return parse_squeue(r.out);
  if (r.err.find("Invalid job id") != std::string::npos) return std::vector<QueuedTask>{};
  return std::nullopt;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// job.json: {"job": "<id>", "tasks": [...], "runs": [...]}, the job the last --slurm submitted:
// its array tasks and the ids of the runs they train (tasks index the plan of that submission).
struct SubmittedJob {
  std::string id;
  std::vector<int> tasks;
  std::vector<std::string> runs;
};

std::optional<SubmittedJob> read_job(const fs::path& path) {
  if (!fs::exists(path)) return std::nullopt;
  const Json j = parse_json_input(read_text_file(path), path.string());
  const auto refuse = [&](const std::string& why) {
    return UsageError(
        fmt::format("{}: {}; this job.json was not written by lenlab, or was changed "
                    "(delete it to submit anew)",
                    path.string(), why));
  };
  SubmittedJob job;
  try {
    job = {j.at("job").get<std::string>(), j.at("tasks").get<std::vector<int>>(),
           j.at("runs").get<std::vector<std::string>>()};
  } catch (const Json::exception& e) {
    throw refuse(json_reason(e));
  }
  if (job.runs.size() != job.tasks.size()) throw refuse("'tasks' and 'runs' differ in length");
  return job;
}

}  // namespace

int submit_and_watch(const ExperimentOptions& o, const std::vector<PlannedRun>& runs,
                     const fs::path& script, const SlurmLimits& limits) {
  const fs::path sbatch = find_slurm_program("sbatch");
  const fs::path squeue = find_slurm_program("squeue");
  const fs::path dir = script.parent_path();
  const fs::path job_file = dir / "job.json";
  const auto finished = [&](const PlannedRun& r) { return run_is_finished(o.out / "runs" / r.id); };
  const auto count_finished = [&] {
    return static_cast<int64_t>(std::count_if(runs.begin(), runs.end(), finished));
  };

  // Watch the job an interrupted watcher left while Slurm still has tasks of it queued;
  // otherwise submit the tasks whose runs are missing.
  std::optional<SubmittedJob> job = read_job(job_file);
  if (job) {
    const auto queued = queued_tasks(squeue, job->id);
    if (queued && queued->empty()) job.reset();
    for (size_t i = 0; job && i < job->tasks.size(); ++i) {
      const size_t task = static_cast<size_t>(job->tasks[i]);
      if (task >= runs.size() || runs[task].id != job->runs[i])
        throw UsageError(fmt::format(
            "Slurm job {} (submitted earlier, {}) is still queued and trains another plan than "
            "this command's (its task {} trains run {}): wait for it to end, or cancel it with "
            "scancel {}, then run this again",
            job->id, job_file.string(), task, job->runs[i], job->id));
    }
    if (job && o.log)
      *o.log << fmt::format("watching Slurm job {}, submitted earlier ({}): {} task(s) queued\n",
                            job->id, job_file.string(), queued ? queued->size() : 0);
  }
  if (!job) {
    std::vector<int> todo;
    for (size_t i = 0; i < runs.size(); ++i)
      if (!finished(runs[i])) todo.push_back(static_cast<int>(i));
    if (todo.empty()) {
      if (o.log)
        *o.log << fmt::format("all {} runs are finished in {}\n", runs.size(), o.out.string());
      return plot_experiment(o.out, o.plot, o.log);
    }
    std::vector<std::string> args = o.sbatch_args;
    args.insert(args.end(), {"--parsable", "--array=" + array_ranges(todo), script.string()});
    const ProgramOutput r = run_program_capture(sbatch, ".", args);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
      throw UsageError(fmt::format("sbatch refused the job ({}): {}", script.string(),
                                   trimmed(r.err.empty() ? r.out : r.err)));
    // --parsable prints "<job id>" or "<job id>;<cluster>".
    const std::string printed = trimmed(r.out);
    const std::string id = printed.substr(0, printed.find(';'));
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError(
          fmt::format("sbatch accepted {} but printed no job id: '{}'", script.string(), printed));
    job = SubmittedJob{id, todo, {}};
    for (const int task : todo) job->runs.push_back(runs[static_cast<size_t>(task)].id);
    write_file_atomic(job_file,
                      Json{{"job", id}, {"tasks", todo}, {"runs", job->runs}}.dump() + "\n");
    if (o.log)
      *o.log << fmt::format(
          "submitted Slurm job {}: {} array task(s) of {} runs ({} already finished); their logs "
          "go to {}/run-<task>.log. Interrupting this leaves the job running: the same command "
          "watches it again\n",
          id, todo.size(), runs.size(), runs.size() - todo.size(), dir.string());
  }

  // One bar fed by the run folders as tasks finish. squeue failing now and then (a busy
  // controller) is waited out; failing for a minute is an error.
  std::ostringstream unseen;  // where the bar goes without a log
  Progress bar("slurm job " + job->id, static_cast<int64_t>(runs.size()), o.log ? *o.log : unseen,
               o.log_is_tty);
  const auto poll = std::chrono::duration<double>(o.slurm_poll_seconds);
  auto last_answer = std::chrono::steady_clock::now();
  for (;;) {
    const auto queued = queued_tasks(squeue, job->id);
    const int64_t done = count_finished();
    if (!queued) {
      if (std::chrono::steady_clock::now() - last_answer > std::chrono::seconds(60))
        throw std::runtime_error(fmt::format(
            "squeue has not answered for a minute about job {}; the job may still be running: "
            "run the same command again to watch it",
            job->id));
    } else {
      last_answer = std::chrono::steady_clock::now();
      const auto waiting = std::count_if(queued->begin(), queued->end(),
                                         [](const QueuedTask& t) { return t.state == "PENDING"; });
      bar.update(done, fmt::format("{} running, {} waiting",
                                   static_cast<long>(queued->size()) - waiting, waiting));
      if (queued->empty()) break;
    }
    std::this_thread::sleep_for(poll);
  }
  bar.finish();

  const SlurmLimits asked = asked_limits(limits, o.sbatch_args);
  std::vector<std::string> failures;
  for (const int task : job->tasks) {
    const PlannedRun& r = runs.at(static_cast<size_t>(task));
    if (finished(r)) continue;
    const fs::path log = dir / fmt::format("run-{}.log", task);
    const std::string text = fs::exists(log) ? read_text_file(log, kTableFileLimit) : "";
    failures.push_back(fmt::format("  run {} (array task {}, log {}): {}", r.id, task, log.string(),
                                   slurm_task_failure(text, asked)));
  }
  if (failures.empty()) return plot_experiment(o.out, o.plot, o.log);
  if (o.log) {
    *o.log << fmt::format("lenlab: error: {} of {} runs did not finish in Slurm job {}:\n",
                          failures.size(), runs.size(), job->id);
    for (const std::string& f : failures) *o.log << f << "\n";
    *o.log << "run the same command again to submit only those (finished runs are kept)\n";
  }
  return kExitFailure;
}

}  // namespace lenlab
