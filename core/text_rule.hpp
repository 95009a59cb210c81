#pragma once
// One rule for every text a user hands lenlab that becomes a name, an id, a path, a CSV cell, a
// figure title or an expression: checked once where it enters (a run's settings in resolve(), a
// config's figure names and titles as the config is read), so that no later step meets a NUL, a
// line break, invalid UTF-8 or a megabyte where it writes a file name or a CSV row.
#include <cstddef>
#include <string>
#include <string_view>

namespace lenlab {

enum class TextKind {
  kText,  // a setting, expression or title: valid UTF-8, no control character, <= kMaxTextBytes
  kName,  // becomes part of a file name too: also non-empty, <= kMaxNameBytes, no '/' or '\',
          // not "." or ".."
};

inline constexpr size_t kMaxTextBytes = 1000;  // an expression or title; gnuplot draws it at once
inline constexpr size_t kMaxNameBytes = 100;   // a figure's name in fig<NAME>.csv and the report

// The length of the UTF-8 sequence starting at s[i] (1..4), or 0 when none valid starts there
// (overlong forms, surrogates and code points past U+10FFFF are invalid, as RFC 3629 says).
size_t utf8_length(std::string_view s, size_t i);

// UsageError "<what> <why>: <the value, shortened>" when value breaks the rule for its kind.
void check_text(std::string_view what, std::string_view value, TextKind kind = TextKind::kText);

// The value for an error message: quoted, control characters and invalid bytes as \xNN, cut to
// about max_chars with the length left out named ("'xxxx…' (900000 bytes)").
std::string shown(std::string_view value, size_t max_chars = 60);

// An error message as printable text of at most about 2000 bytes: a message that quotes a huge
// value keeps its head and its tail (where the reason usually is); control characters but line
// breaks and tabs become \xNN. What the CLI prints, whatever threw.
std::string error_line(std::string_view message);

}  // namespace lenlab
