#pragma once
// A `lenlab serve` page server on a free loopback port for the length of a test, and plain
// sockets to talk to it as hostile clients do (httplib::Client would not send a header line a
// second, or lie about a body).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "lab/serve/server.hpp"

namespace lenlab::test {

struct ServedPage {
  PageServer server;
  int port;
  std::thread listening;
  explicit ServedPage(ServeOptions o)
      : server((o.port = 0, std::move(o))),
        port(server.bind()),
        listening([this] { server.listen(); }) {}
  ~ServedPage() {
    server.stop();
    listening.join();
  }
};

// A connected socket (-1 when the server refused or reset it).
inline int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends all of `data` (false once the peer has closed or reset).
inline bool send_all(int fd, const std::string& data) {
  for (size_t at = 0; at < data.size();) {
    const ssize_t n = ::send(fd, data.data() + at, data.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

// Everything the server sends until it closes the connection or `timeout` passes; "" on a reset
// before any byte.
inline std::string receive_all(int fd, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  std::string got;
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now())
                          .count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return got;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) return got;
    got.append(buffer, static_cast<size_t>(n));
  }
}

// One request on a fresh connection (with Connection: close), its whole answer.
inline std::string round_trip(int port, const std::string& request,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const int fd = connect_to(port);
  if (fd < 0) return "";
  std::string answer = send_all(fd, request) ? receive_all(fd, timeout) : "";
  if (answer.empty()) answer = receive_all(fd, std::chrono::milliseconds(100));
  ::close(fd);
  return answer;
}

inline std::string post_request(const std::string& body) {
  return "POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: "
         "application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

inline std::string get_request(const std::string& path) {
  return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
}

// The status of an answer ("HTTP/1.1 413 Payload Too Large…" → 413; 0: none) and its body.
inline int status_of(const std::string& answer) {
  return answer.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(answer.c_str() + 9) : 0;
}
inline std::string body_of(const std::string& answer) {
  const size_t at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "" : answer.substr(at + 4);
}

}  // namespace lenlab::test
