#include "lab/serve/interfaces.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "core/ascii_case.hpp"

namespace lenlab {

std::vector<InterfaceAddress> interface_addresses() {
  std::vector<InterfaceAddress> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || !(a->ifa_flags & IFF_UP)) continue;
    const int family = a->ifa_addr->sa_family;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = nullptr;
    if (family == AF_INET)
      raw = &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr;
    else if (family == AF_INET6)
      raw = &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr;
    if (!raw || !inet_ntop(family, raw, text, sizeof(text))) continue;
    InterfaceAddress entry{text, family == AF_INET6, (a->ifa_flags & IFF_LOOPBACK) != 0};
    if (std::none_of(out.begin(), out.end(),
                     [&](const InterfaceAddress& e) { return e.address == entry.address; }))
      out.push_back(entry);
  }
  freeifaddrs(list);
  return out;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return ascii_lower(name);
}

std::vector<std::string> reachable_urls(const std::string& bind, int port) {
  const bool any = bind == "0.0.0.0" || bind == "::" || bind.empty();
  if (!any) {
    const bool ipv6 = bind.find(':') != std::string::npos;
    return {ipv6 ? fmt::format("http://[{}]:{}/", bind, port)
                 : fmt::format("http://{}:{}/", bind, port)};
  }
  std::vector<std::string> urls;
  for (const InterfaceAddress& a : interface_addresses())
    if (!a.ipv6 && !a.loopback) urls.push_back(fmt::format("http://{}:{}/", a.address, port));
  urls.push_back(fmt::format("http://127.0.0.1:{}/", port));
  return urls;
}

}  // namespace lenlab
