#pragma once
// This process's resident memory, as Linux reports it (/proc/self/status): what lenlab eval
// --stream records beside its cache size, so that a bounded cache's claim is checked on the whole
// process. 0 where the file cannot be read.
#include <cstdint>

namespace lenlab {

int64_t resident_memory_bytes();       // VmRSS: now
int64_t peak_resident_memory_bytes();  // VmHWM: the most so far

}  // namespace lenlab
