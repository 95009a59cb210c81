#pragma once
// `lenlab serve`'s HTTP side (cpp-httplib): the page's files and its JSON API over a RunQueue.
//   GET  /api/options                the choices and defaults (lab/serve/page_settings.hpp)
//   POST /api/runs                   a flat JSON object of settings → {number, id, state,
//                                    queue_position}; 400 {errors: [{field, message}]} with the
//                                    CLI's messages; 503 when the queue is full or closed
//   GET  /api/runs, /api/runs/N      the runs (lab/serve/run_queue.hpp's run_json); the list
//                                    with "queue_open"
//   GET  /api/runs/N/results.csv     a finished run's results.csv (404 before)
//   GET  /api/runs/N/sample          a completed text run's sample, {prompt, text, tokens,
//                                    decoding} (lab/serve/run_sample.hpp); 404 for another run
// and the classroom's routes (lab/serve/class_routes.hpp). In a classroom
// (lab/serve/classroom.hpp) every /api/ route but the session and the join needs a session (401),
// a student sees, downloads and fine-tunes from their own runs only (another's is 404), and a
// student's submission beyond their limit is 429.
// Before routing, every request's Host, Origin and (POST) Content-Type are checked
// (lab/serve/request_guard.hpp): 403 or 415, and nothing queued. Settings that name files on the
// server are taken by name or run number only (lab/serve/server_paths.hpp).
// Every error is JSON, {"errors": [{"field": null or a setting, "message": "..."}]}: 400 for a
// request or body that cannot be read (not HTTP, not UTF-8, not JSON, not a flat object), 404,
// 413 for a body over 1 MiB (counted as it is read, chunked or not), 500 with the exception's
// message.
// Limits against slow or hostile clients (lab/serve/guarded_http.hpp), sized for a room of
// students whose browsers poll twice a second:
//   - a request (line, headers, body) must arrive within 5 s of its first byte, and at most
//     1 MiB + 64 KiB of it is read; a connection waits 2 s for its next request, serves at most
//     100, and a reply's write may wait 5 s for the client;
//   - 256 threads serve connections (httplib serves a connection on one thread from its first
//     byte to its close): a polling browser keeps one busy, and slow clients (each held at most
//     ~7 s) must outnumber what a class leaves free to starve the others; past 256 connections
//     the next wait in a queue (not refused) for a thread to come free;
//   - the listen backlog is SOMAXCONN (4096 on current Linux, capped by net.core.somaxconn), so a
//     burst of a few hundred connections is queued, not reset.
#include <memory>
#include <string>
#include <vector>

#include "lab/serve/classroom.hpp"
#include "lab/serve/run_queue.hpp"

namespace lenlab {

struct ServeOptions {
  std::string host = "127.0.0.1";          // localhost only unless asked
  int port = 8080;                         // 0: any free port
  std::vector<std::string> allow_hosts;    // more names the Host header may give (--allow-host)
  std::vector<std::string> allow_origins;  // more origins pages may come from (--allow-origin)
  ClassroomOptions classroom;              // off: one local user (lab/serve/classroom.hpp)
  RunQueueOptions queue;  // queue.corpora: the corpora offered by name (offered_corpora)
};

class PageServer {
 public:
  explicit PageServer(ServeOptions options);
  ~PageServer();
  PageServer(const PageServer&) = delete;
  PageServer& operator=(const PageServer&) = delete;

  // Binds (UsageError naming host and port when it cannot, or a bad --allow-host or
  // --allow-origin) and returns the port bound; from then on requests are checked against it.
  int bind();
  // Serves until stop() (from another thread or a signal handler's thread).
  void listen();
  void stop();
  RunQueue& queue();
  const Classroom& classroom() const;  // its codes, drawn when the options left them empty

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lenlab
