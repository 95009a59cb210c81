#include "lab/serve/fair_queue.hpp"

namespace lenlab {

std::vector<int> fair_order(const std::vector<QueuedRun>& queued,
                            std::map<std::string, int> started) {
  // O(n²) over a queue of at most --max-queued runs (64 by default): simulated start by start.
  std::vector<bool> taken(queued.size(), false);
  std::vector<int> order;
  order.reserve(queued.size());
  for (size_t step = 0; step < queued.size(); ++step) {
    size_t best = queued.size();
    for (size_t i = 0; i < queued.size(); ++i)
      if (!taken[i] &&
          (best == queued.size() || started[queued[i].owner] < started[queued[best].owner]))
        best = i;  // strictly fewer: among equals the earliest stays
    taken[best] = true;
    ++started[queued[best].owner];
    order.push_back(queued[best].number);
  }
  return order;
}

}  // namespace lenlab
