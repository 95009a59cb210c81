#include "lab/serve/request_guard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/ascii_case.hpp"
#include "core/error.hpp"
#include "lab/serve/interfaces.hpp"

namespace lenlab {

namespace {

// A Host header's (or an origin's) host and port: "localhost:8080" → {"localhost", 8080},
// "[::1]" → {"[::1]", -1}; nullopt when it is not HOST[:PORT].
struct HostPort {
  std::string host;
  int port = -1;  // -1: none given
};
std::optional<HostPort> split_host(const std::string& text) {
  std::string host = text, port;
  if (!text.empty() && text.front() == '[') {  // an IPv6 address: [addr] or [addr]:port
    const size_t close = text.find(']');
    if (close == std::string::npos) return std::nullopt;
    host = text.substr(0, close + 1);
    const std::string rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return std::nullopt;
    if (!rest.empty()) port = rest.substr(1);
    if (rest.size() == 1) return std::nullopt;  // "[::1]:" with no port
  } else if (const size_t colon = text.find(':'); colon != std::string::npos) {
    if (text.find(':', colon + 1) != std::string::npos) return std::nullopt;  // IPv6 unbracketed
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (port.empty()) return std::nullopt;  // "host:" with no port
  }
  if (host.empty()) return std::nullopt;
  for (const char c : host)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '/' || c == '@') return std::nullopt;
  HostPort out{ascii_lower(host), -1};
  if (!port.empty()) {
    if (port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); }))
      return std::nullopt;
    out.port = std::stoi(port);
  }
  return out;
}

// "localhost, 127.0.0.1 or [::1]" (with the port rule) for the messages.
std::string hosts_text(const AllowedClients& allowed) {
  return fmt::format("{} (optionally with :{}; lenlab serve --allow-host NAME adds one)",
                     join_choices({allowed.hosts.begin(), allowed.hosts.end()}), allowed.port);
}

bool host_allowed(const AllowedClients& allowed, const HostPort& h) {
  return allowed.hosts.count(h.host) && (h.port == -1 || h.port == allowed.port);
}

std::string shown(const std::string& value) {
  // The value as sent, cut short: it goes into a JSON message (which escapes it).
  return value.size() > 200 ? value.substr(0, 200) + "…" : value;
}

}  // namespace

bool is_loopback(const std::string& bind) {
  return bind.rfind("127.", 0) == 0 || bind == "::1" || ascii_lower(bind) == "localhost";
}

AllowedClients allowed_clients(const std::string& bind, int port,
                               const std::vector<std::string>& allow_hosts,
                               const std::vector<std::string>& allow_origins) {
  AllowedClients allowed;
  allowed.port = port;
  allowed.hosts = {"localhost", "127.0.0.1", "[::1]"};
  if (!is_loopback(bind)) {
    for (const InterfaceAddress& a : interface_addresses())
      // fmt, not "[" + string: GCC 12 -O3 warns falsely on that operator+ (-Wstringop-overflow).
      allowed.hosts.insert(a.ipv6 ? fmt::format("[{}]", ascii_lower(a.address)) : a.address);
    if (const std::string name = host_name(); !name.empty()) allowed.hosts.insert(name);
    if (bind != "0.0.0.0" && bind != "::" && !bind.empty())
      allowed.hosts.insert(bind.find(':') != std::string::npos
                               ? fmt::format("[{}]", ascii_lower(bind))
                               : ascii_lower(bind));
  }
  for (const std::string& name : allow_hosts) {
    const auto h = split_host(name);
    if (!h || h->port != -1)
      throw UsageError(fmt::format(
          "--allow-host '{}' is not a host name: give a name or address without scheme, port or "
          "path, e.g. --allow-host lab.example.org or --allow-host 10.0.0.5",
          name));
    allowed.hosts.insert(h->host);
  }
  for (const std::string& origin : allow_origins) {
    std::string o = ascii_lower(origin);
    if (!o.empty() && o.back() == '/') o.pop_back();
    const size_t scheme = o.find("://");
    const std::string scheme_name = scheme == std::string::npos ? "" : o.substr(0, scheme);
    if ((scheme_name != "http" && scheme_name != "https") || !split_host(o.substr(scheme + 3)))
      throw UsageError(fmt::format(
          "--allow-origin '{}' is not an origin: give SCHEME://HOST[:PORT] with scheme http or "
          "https and no path, e.g. --allow-origin https://lab.example.org",
          origin));
    allowed.origins.insert(o);
  }
  return allowed;
}

std::optional<Refusal> refuse_request(const AllowedClients& allowed, const std::string& method,
                                      const std::optional<std::string>& host,
                                      const std::optional<std::string>& origin,
                                      const std::optional<std::string>& content_type) {
  if (!host)
    return Refusal{403, fmt::format("the request has no Host header; it must name this server: {}",
                                    hosts_text(allowed))};
  if (const auto h = split_host(*host); !h || !host_allowed(allowed, *h))
    return Refusal{403, fmt::format("the Host header '{}' does not name this server; allowed: {}",
                                    shown(*host), hosts_text(allowed))};
  if (origin) {
    std::string o = ascii_lower(*origin);
    if (!o.empty() && o.back() == '/') o.pop_back();
    bool same = false;
    if (o.rfind("http://", 0) == 0)
      if (const auto h = split_host(o.substr(7)))
        same = allowed.hosts.count(h->host) && (h->port == -1 ? 80 : h->port) == allowed.port;
    if (!same && !allowed.origins.count(o)) {
      std::vector<std::string> origins(allowed.origins.begin(), allowed.origins.end());
      return Refusal{
          403, fmt::format("the Origin header '{}' is not this server's: a page may use this "
                           "server only from http://HOST:{} with HOST one of {}{}; lenlab serve "
                           "--allow-origin ORIGIN adds one",
                           shown(*origin), allowed.port,
                           join_choices({allowed.hosts.begin(), allowed.hosts.end()}),
                           origins.empty() ? "" : ", or from " + join_choices(origins))};
    }
  }
  if (method == "POST") {
    const std::string type = content_type.value_or("");
    const std::string media = ascii_lower(type.substr(0, type.find(';')));
    const auto trimmed = [](std::string s) {
      while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
      while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(0, 1);
      return s;
    };
    if (trimmed(media) != "application/json")
      return Refusal{415, fmt::format("a POST body must be Content-Type: application/json (a JSON "
                                      "object of settings); got {}",
                                      content_type ? "'" + shown(type) + "'" : "no Content-Type")};
  }
  return std::nullopt;
}

}  // namespace lenlab
