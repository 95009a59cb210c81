#include "lab/serve/guarded_http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace lenlab {

namespace {

using Clock = std::chrono::steady_clock;

// Whether `sock` became ready for `events` before `deadline` (a hang-up or an error counts as
// ready: the read or write that follows says which).
bool wait_for(int sock, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{sock, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, INT_MAX)));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

std::string address_of(const sockaddr_storage& a, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof(text));
    port = ntohs(in.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof(text));
    port = ntohs(in6.sin6_port);
  }
  return text;
}

// The connection being served on this thread: httplib calls the handlers (and the error handler)
// on the thread that reads the request.
thread_local bool t_close_after_reply = false;

// A socket read within a request's deadline and byte budget, through a buffer (httplib reads
// headers one byte at a time).
class LimitedStream final : public httplib::Stream {
 public:
  LimitedStream(int sock, const HttpLimits& limits) : sock_(sock), limits_(limits) {}

  // A request starts: its first byte is buffered or ready.
  void start_request() {
    deadline_ = Clock::now() + limits_.request_read;
    budget_ = limits_.request_bytes;
  }
  bool buffered() const { return pos_ < end_; }
  // A limit was reached or the socket failed: nothing more is read on this connection.
  bool exhausted() const { return exhausted_; }
  bool over_budget() const { return over_budget_; }

  bool is_readable() const override {
    return buffered() || (!exhausted_ && wait_for(sock_, POLLIN, deadline_));
  }
  bool is_writable() const override {
    return wait_for(sock_, POLLOUT, Clock::now() + limits_.write);
  }

  ssize_t read(char* ptr, size_t size) override {
    if (exhausted_) return -1;
    if (budget_ == 0) {
      exhausted_ = over_budget_ = true;
      return -1;
    }
    if (!buffered()) {
      if (!wait_for(sock_, POLLIN, deadline_)) {
        exhausted_ = true;
        return -1;
      }
      ssize_t n;
      do n = ::recv(sock_, buffer_, sizeof(buffer_), 0);
      while (n < 0 && errno == EINTR);
      if (n <= 0) {
        exhausted_ = true;
        return n;
      }
      pos_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min({size, end_ - pos_, budget_});
    std::memcpy(ptr, buffer_ + pos_, n);
    pos_ += n;
    budget_ -= n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof(a);
    if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip = address_of(a, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof(a);
    if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip = address_of(a, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  int sock_;
  const HttpLimits& limits_;
  Clock::time_point deadline_ = Clock::now();
  size_t budget_ = 0;
  bool exhausted_ = false, over_budget_ = false;
  char buffer_[4096];
  size_t pos_ = 0, end_ = 0;
};

// Closes a connection whose last request may have been left partly unread: a close() with unread
// bytes makes the kernel reset the connection, and the client may then lose the reply it has not
// read yet. So the reply's end is sent (FIN), and what the client still sends is read and dropped
// for a short while first.
void close_after_draining(int sock) {
  ::shutdown(sock, SHUT_WR);
  const auto until = Clock::now() + std::chrono::milliseconds(500);
  char sink[16384];
  for (size_t dropped = 0; dropped < (8u << 20) && wait_for(sock, POLLIN, until);) {
    const ssize_t n = ::recv(sock, sink, sizeof(sink), 0);
    if (n <= 0) break;
    dropped += static_cast<size_t>(n);
  }
  ::close(sock);
}

}  // namespace

GuardedServer::GuardedServer(const HttpLimits& limits) : limits_(limits) {
  new_task_queue = [n = limits_.workers] { return new httplib::ThreadPool(n); };
}

void GuardedServer::widen_backlog() {
  ::listen(svr_sock_, SOMAXCONN);
}

void GuardedServer::close_after_reply() {
  t_close_after_reply = true;
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  LimitedStream stream(sock, limits_);
  bool ok = false;
  for (int left = limits_.max_requests; left > 0; --left) {
    // The wait for a request, in slices, so that stop() is not held up by idle connections.
    const auto idle_until = Clock::now() + limits_.idle;
    bool ready = stream.buffered();
    while (!ready && svr_sock_ != INVALID_SOCKET && Clock::now() < idle_until)
      ready = wait_for(sock, POLLIN,
                       std::min(idle_until, Clock::now() + std::chrono::milliseconds(100)));
    if (!ready || svr_sock_ == INVALID_SOCKET) break;
    stream.start_request();
    t_close_after_reply = false;
    bool connection_closed = false;
    ok = process_request(stream, left == 1, connection_closed, nullptr);
    if (!ok || connection_closed || t_close_after_reply || stream.exhausted()) break;
  }
  if (t_close_after_reply || stream.over_budget()) {
    close_after_draining(sock);
  } else {
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  }
  t_close_after_reply = false;
  return ok;
}

}  // namespace lenlab
