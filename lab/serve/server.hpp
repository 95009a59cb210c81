#pragma once
// `lenlab serve`'s HTTP side (cpp-httplib): the page's files and its JSON API over a RunQueue.
//   GET  /api/options                the choices and defaults (lab/serve/page_settings.hpp)
//   POST /api/runs                   a flat JSON object of settings → {number, id, state,
//                                    queue_position}; 400 {errors: [{field, message}]} with the
//                                    CLI's messages; 503 when the queue is full
//   GET  /api/runs, /api/runs/N      the runs (lab/serve/run_queue.hpp's run_json)
//   GET  /api/runs/N/results.csv     a finished run's results.csv (404 before)
#include <memory>
#include <string>

#include "lab/serve/run_queue.hpp"

namespace lenlab {

struct ServeOptions {
  std::string host = "127.0.0.1";  // localhost only unless asked
  int port = 8080;                 // 0: any free port
  RunQueueOptions queue;
};

class PageServer {
 public:
  explicit PageServer(ServeOptions options);
  ~PageServer();
  PageServer(const PageServer&) = delete;
  PageServer& operator=(const PageServer&) = delete;

  // Binds (UsageError naming host and port when it cannot) and returns the port bound.
  int bind();
  // Serves until stop() (from another thread or a signal handler's thread).
  void listen();
  void stop();
  RunQueue& queue();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lenlab
