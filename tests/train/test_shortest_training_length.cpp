// Every task's training lengths start at its shortest (tasks/token_tasks.hpp's shortest_length):
// an --l-train below it is refused naming the task, its shortest and why, as test lengths below
// it are, rather than training at the shortest while the manifest says --l-train. A loop over
// the task table, so a new task with a shortest above 1 is checked too.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "core/error.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;

TEST_CASE("an --l-train below a task's shortest length is refused, for every task in the table") {
  int above_one = 0;  // tasks whose shortest is above 1: the table has some
  for (const std::string& name : task_names()) {
    CAPTURE(name);
    TrainSpec s;
    s.task = name;
    const TaskKind task = parse_task(name);
    const int shortest = shortest_length(task, s.token);
    s.l_test = shortest + 3;
    s.l_train = shortest;
    // At the shortest: trained at it, and the manifest's l_train is what was trained.
    const ResolvedSpec at = resolve(s);
    CHECK(at.train_lengths.lo == shortest);
    CHECK(at.train_lengths.hi == shortest);
    CHECK(test_lengths(s).front() == shortest);
    if (shortest == 1) continue;
    ++above_one;
    for (int l = 1; l < shortest; ++l) {
      CAPTURE(l);
      s.l_train = l;
      const std::string want =
          fmt::format("--l-train {} is below {}, {}", l, shortest, shortest_length_why(task));
      CHECK_THROWS_WITH_AS(resolve(s), doctest::Contains(want.c_str()), UsageError);
      CHECK(want.find("task '" + name + "'") != std::string::npos);
    }
  }
  CHECK(above_one >= 4);
}
