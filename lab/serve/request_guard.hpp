#pragma once
// Who may talk to `lenlab serve`: every request is checked before it is routed (httplib's
// pre-routing handler), so that a web page on another site cannot use a student's browser to
// start runs, and a DNS name rebound to this machine cannot read it.
//   - Host must name this server: on a loopback bind localhost, 127.0.0.1 or [::1]; on any other
//     bind also the machine's interface addresses and its hostname; always the names given with
//     --allow-host. A port, when the header has one, must be the port bound. Else 403.
//   - Origin, when a browser sends one, must be this server's own origin, http://HOST[:PORT] with
//     HOST one of the above and PORT the port bound (absent: 80), or one given with
//     --allow-origin. Else 403.
//   - A POST's body must be Content-Type: application/json: a cross-site form or text/plain POST
//     needs no CORS preflight, a JSON one does (and this server answers none). Else 415.
// A refused request reaches no handler: nothing is queued, and its body is left unread (the
// connection is closed after the reply).
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lenlab {

struct AllowedClients {
  std::set<std::string> hosts;    // lower case, IPv6 in brackets: "localhost", "[::1]"
  std::set<std::string> origins;  // --allow-origin's, normalised (lower case, no trailing '/')
  int port = 0;                   // the port bound
};

// The hosts and origins `lenlab serve --host BIND` allows once bound to `port`. UsageError naming
// the value for an --allow-host or --allow-origin that cannot be one.
AllowedClients allowed_clients(const std::string& bind, int port,
                               const std::vector<std::string>& allow_hosts,
                               const std::vector<std::string>& allow_origins);

// Whether `bind` is a loopback address (127.0.0.0/8, ::1, localhost): this machine only.
bool is_loopback(const std::string& bind);

struct Refusal {
  int status;           // 403 or 415
  std::string message;  // names the header, the value and what is allowed
};

// The refusal of a request with these headers ("" when absent), or nullopt when it may go on.
std::optional<Refusal> refuse_request(const AllowedClients& allowed, const std::string& method,
                                      const std::optional<std::string>& host,
                                      const std::optional<std::string>& origin,
                                      const std::optional<std::string>& content_type);

}  // namespace lenlab
