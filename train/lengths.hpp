#pragma once
// Test lengths as a user writes them: a comma-separated list of lengths and ranges, e.g.
// "1..50,64,128,256,512,1024" or "64..1024:64" (a range with a step). `--lengths` of train and
// eval, and the `lengths` key of configs.
#include <string>
#include <vector>

namespace lenlab {

// The lengths `text` names, sorted ascending, each once. Throws UsageError naming `flag`, the
// bad item and the grammar: an empty list or item, a non-integer, a length outside 1..max_length,
// a range whose end is below its start, a step < 1, or more than max_count lengths in all.
std::vector<int> parse_lengths(const std::string& text, const std::string& flag, int max_length,
                               size_t max_count = 100000);

// The shortest text parse_lengths reads back as `lengths` (sorted, unique): runs of consecutive
// lengths as A..B, the rest listed. "1..50,64,128".
std::string format_lengths(const std::vector<int>& lengths);

}  // namespace lenlab
