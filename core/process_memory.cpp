#include "core/process_memory.hpp"

#include <fstream>
#include <string>

namespace lenlab {

namespace {

// The value of `key` ("VmRSS:") in /proc/self/status, in bytes (the file says kB).
int64_t status_bytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string name;
  int64_t kilobytes = 0;
  std::string unit;
  while (in >> name) {
    if (name == key && in >> kilobytes >> unit) return kilobytes * 1024;
    std::getline(in, unit);
  }
  return 0;
}

}  // namespace

int64_t resident_memory_bytes() {
  return status_bytes("VmRSS:");
}
int64_t peak_resident_memory_bytes() {
  return status_bytes("VmHWM:");
}

}  // namespace lenlab
