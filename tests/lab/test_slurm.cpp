// The parts of `lenlab run --slurm` (lab/experiment/slurm_submit.hpp) that need no cluster: the
// array list given to sbatch, squeue's answer read back, and why a task failed, said from its log
// as Slurm and lenlab write it. The cluster itself: tests/slurm/test_slurm.sh.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "lab/experiment/slurm_submit.hpp"

using namespace lenlab;

TEST_CASE("sbatch's --array list joins consecutive tasks into ranges") {
  CHECK(array_ranges({}) == "");
  CHECK(array_ranges({4}) == "4");
  CHECK(array_ranges({0, 1, 2, 3}) == "0-3");
  CHECK(array_ranges({0, 2, 3, 4, 7, 9, 10}) == "0,2-4,7,9-10");
}

TEST_CASE("squeue's tasks are read one per line, a pending record's ranges expanded") {
  const std::vector<QueuedTask> tasks = parse_squeue("3 RUNNING\n5-7 PENDING\n\n9,11 PENDING\n");
  REQUIRE(tasks.size() == 6);
  CHECK(tasks[0].task == 3);
  CHECK(tasks[0].state == "RUNNING");
  CHECK(tasks[1].task == 5);
  CHECK(tasks[3].task == 7);
  CHECK(tasks[3].state == "PENDING");
  CHECK(tasks[4].task == 9);
  CHECK(tasks[5].task == 11);
  CHECK(parse_squeue("").empty());
}

TEST_CASE("a failed task is explained from its log: time, memory, cancel, lenlab's error") {
  const SlurmLimits asked{"2G", "0-00:10:00", 1};
  // Slurm's own words, as slurmstepd writes them into the task's log.
  const std::string timeout =
      "runs 40% ETA 2m\nslurmstepd: error: *** JOB 12 ON node3 CANCELLED AT 2026-11-27T10:00:00 "
      "DUE TO TIME LIMIT ***\n";
  const std::string why_time = slurm_task_failure(timeout, asked);
  CHECK(why_time.find("time limit, --time=0-00:10:00") != std::string::npos);
  CHECK(why_time.find("--sbatch-arg=--time=") != std::string::npos);
  CHECK(why_time.find("DUE TO TIME LIMIT") != std::string::npos);

  const std::string memory =
      "slurmstepd: error: StepId=4.batch exceeded memory limit (224858112 > 20971520), being "
      "killed\nslurmstepd: error: Exceeded job memory limit\n";
  const std::string why_memory = slurm_task_failure(memory, asked);
  CHECK(why_memory.find("more memory than its --mem=2G") != std::string::npos);
  CHECK(why_memory.find("224858112 > 20971520") != std::string::npos);  // by how much
  CHECK(slurm_task_failure("slurmstepd: error: Detected 1 oom-kill event(s)\n", asked)
            .find("--mem=2G") != std::string::npos);

  CHECK(slurm_task_failure("slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2026 ***\n", asked)
            .find("cancelled") != std::string::npos);
  CHECK(slurm_task_failure("runs 10%\nlenlab: error: directory /x is not writable\n", asked) ==
        "lenlab: error: directory /x is not writable");
  CHECK(slurm_task_failure("Segmentation fault\n\n", asked).find("its log ends: Segmentation") !=
        std::string::npos);
  CHECK(slurm_task_failure("", asked).find("empty log") != std::string::npos);
}

TEST_CASE("the limits a task ran under: the script's, or sbatch options given with --sbatch-arg") {
  const SlurmLimits script{"1G", "0-00:10:00", 1};
  const SlurmLimits same = asked_limits(script, {"--partition=gpu"});
  CHECK(same.mem == "1G");
  CHECK(same.time == "0-00:10:00");
  const SlurmLimits other = asked_limits(script, {"--mem=8M", "--time=1:00:00"});
  CHECK(other.mem == "8M (from --sbatch-arg)");
  CHECK(other.time == "1:00:00 (from --sbatch-arg)");
}

TEST_CASE("--slurm without sbatch on PATH names the program and what to do instead") {
  CHECK_THROWS_WITH_AS(find_slurm_program("lenlab-no-such-sbatch"),
                       doctest::Contains("no lenlab-no-such-sbatch on PATH"), UsageError);
  CHECK_THROWS_WITH_AS(find_slurm_program("lenlab-no-such-sbatch"),
                       doctest::Contains("--emit-slurm"), UsageError);
}
