#pragma once
// httplib::Server (Debian's cpp-httplib 0.11.4) with the limits a room of students and one
// hostile client need, which the library's own settings cannot give:
//   - each request (request line, headers, body) must arrive within `request_read` of its first
//     byte, whatever its pace: httplib's read timeout is per read(), so a client sending one
//     header line every second held a worker thread for ever;
//   - at most `request_bytes` are read for one request, whatever the transfer encoding;
//   - a connection waits at most `idle` for its next request, and is closed after
//     `max_requests`;
//   - `workers` threads serve connections (httplib's default is 8 on a small machine, which ten
//     slow clients took), and the listening socket's backlog is SOMAXCONN instead of httplib's 5,
//     which reset connections in a burst.
// It replaces httplib's connection loop (process_and_close_socket, a virtual the library calls for
// each accepted socket) with one over a stream that knows these limits; httplib still parses and
// routes each request (process_request).
#include <chrono>
#include <cstddef>

// Last among the includes of any file: it includes <resolv.h>, whose `_res` macro breaks Eigen
// headers included after it.
#include <httplib.h>

namespace lenlab {

struct HttpLimits {
  std::chrono::milliseconds request_read{5000};        // first byte of a request → its last
  std::chrono::milliseconds idle{2000};                // a connection's wait for its next request
  std::chrono::milliseconds write{5000};               // one write's wait for the client to read
  std::size_t request_bytes = (1 << 20) + (64 << 10);  // body limit + headers
  int max_requests = 100;                              // per connection (keep-alive)
  int workers = 256;
};

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(const HttpLimits& limits);
  // After bind_to_port: the listening socket's backlog raised to SOMAXCONN (Linux takes a second
  // listen() on a listening socket as a new backlog).
  void widen_backlog();
  // From a handler or the error handler: close the connection once this reply is written (its
  // request's body may be left unread, so the next bytes are not a request).
  static void close_after_reply();

 private:
  bool process_and_close_socket(socket_t sock) override;
  HttpLimits limits_;
};

}  // namespace lenlab
