#pragma once
// A guard in front of toml++: the toml++ of Debian 12 (3.3.0) reaches __builtin_unreachable() on a
// non-ASCII character where whitespace may stand (`seeds = [1, é]`), and where a multi-line
// string's line-ending backslash trims whitespace up to one; found by fuzzing (docs/fuzzing.md;
// upstream marzer/tomlplusplus#190). TOML allows non-ASCII characters only inside strings and
// comments anyway, so this refuses them elsewhere, before toml++ sees the text. It refuses too a
// key nested deeper than kMaxTomlDepth tables (dotted parts, inline tables and arrays it stands
// in), on which toml++ recurses until the stack overflows.
#include <string>

namespace lenlab {

inline constexpr int kMaxTomlDepth = 64;

// UsageError "<source>:<line>: a non-ASCII character outside a string or comment; …" on the first
// non-ASCII byte outside a string or comment, or right after a multi-line string's line-ending
// backslash; "<source>:<line>: a key nested more than 64 tables deep; …" on a deeper key.
void check_ascii_outside_strings(const std::string& text, const std::string& source);

}  // namespace lenlab
