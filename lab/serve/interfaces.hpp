#pragma once
// This machine's network addresses (getifaddrs), for the addresses `lenlab serve` prints and the
// Host headers it accepts.
#include <string>
#include <vector>

namespace lenlab {

struct InterfaceAddress {
  std::string address;  // "192.168.1.20", "fe80::1" (no brackets, no zone)
  bool ipv6 = false;
  bool loopback = false;
};

// Every address of an interface that is up; empty when getifaddrs fails.
std::vector<InterfaceAddress> interface_addresses();

// The machine's hostname (gethostname), lower case; "" when it has none.
std::string host_name();

// What students can type to reach a server bound to `bind`:`port`: on 0.0.0.0 or :: each
// non-loopback IPv4 address of the machine as http://ADDR:PORT/, then the loopback one; on a
// specific address, that address (an IPv6 one in brackets).
std::vector<std::string> reachable_urls(const std::string& bind, int port);

}  // namespace lenlab
