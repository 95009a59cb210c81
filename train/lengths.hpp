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

// Passkey's test depths as a user writes them: numbers in [0, 1] and the word "random" (the key at
// a uniformly random depth per sequence, written kNoDepth), separated by commas, e.g.
// "0,0.25,0.5,0.75,1". Sorted ascending (random first), each once. UsageError naming `flag` and
// the bad item: an empty list or item, a non-number, a depth outside [0, 1], more than 101 depths.
std::vector<double> parse_depths(const std::string& text, const std::string& flag);
inline constexpr const char* kDefaultDepths = "0,0.25,0.5,0.75,1";

}  // namespace lenlab
