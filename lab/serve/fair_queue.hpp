#pragma once
// The order in which the live page's queued runs start, fair between students: whenever a worker
// comes free it takes the queued run of the owner who has started the fewest runs so far (ties: the
// run queued first). A student who queues several runs thus waits behind every other student's
// next one, and no one's runs wait behind a long list of another's.
#include <map>
#include <string>
#include <vector>

namespace lenlab {

struct QueuedRun {
  int number = 0;
  std::string owner;  // "" for the local user or the teacher: one owner like any other
};

// `queued`: in the order submitted. `started`: runs each owner has started so far (training or
// finished). Returns the numbers in the order they will start.
std::vector<int> fair_order(const std::vector<QueuedRun>& queued,
                            std::map<std::string, int> started);

}  // namespace lenlab
