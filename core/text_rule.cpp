#include "core/text_rule.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab {
namespace {

bool is_control(unsigned char c) {
  return c < 0x20 || c == 0x7F;
}

// C1 controls (U+0080..U+009F) are two bytes, 0xC2 0x80..0x9F.
bool is_c1_control(std::string_view s, size_t i) {
  return static_cast<unsigned char>(s[i]) == 0xC2 && i + 1 < s.size() &&
         static_cast<unsigned char>(s[i + 1]) <= 0x9F;
}

// s with control characters and invalid bytes as \xNN (line breaks and tabs kept if asked).
std::string escaped(std::string_view s, bool keep_breaks = false) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    const bool kept = keep_breaks && (s[i] == '\n' || s[i] == '\t');
    if (n == 0 || (n == 1 && is_control(static_cast<unsigned char>(s[i])) && !kept)) {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(s[i]));
      ++i;
    } else if (n == 2 && is_c1_control(s, i)) {
      out += fmt::format("\\xC2\\x{:02X}", static_cast<unsigned char>(s[i + 1]));
      i += 2;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

// The first bytes of s, at most max_bytes, not cutting a UTF-8 sequence.
std::string_view head(std::string_view s, size_t max_bytes) {
  size_t end = 0;
  while (end < s.size()) {
    const size_t n = std::max<size_t>(utf8_length(s, end), 1);
    if (end + n > max_bytes) break;
    end += n;
  }
  return s.substr(0, end);
}

// The last bytes of s, at most max_bytes, starting on a UTF-8 sequence's first byte.
std::string_view tail(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t start = s.size() - max_bytes;
  while (start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) ++start;
  return s.substr(start);
}

}  // namespace

size_t utf8_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

std::string shown(std::string_view value, size_t max_chars) {
  if (value.size() <= max_chars) return fmt::format("'{}'", escaped(value));
  return fmt::format("'{}…' ({} bytes)", escaped(head(value, max_chars)), value.size());
}

void check_text(std::string_view what, std::string_view value, TextKind kind) {
  const bool name = kind == TextKind::kName;
  const size_t limit = name ? kMaxNameBytes : kMaxTextBytes;
  const char* rule =
      name ? "a name is one line of printable UTF-8 without '/' or '\\', 1 to 100 bytes"
           : "it must be one line of printable UTF-8, at most 1000 bytes";
  const auto refuse = [&](const std::string& why) {
    throw UsageError(fmt::format("{} {}: {}; {}", what, why, shown(value), rule));
  };
  if (value.size() > limit) refuse(fmt::format("is {} bytes long", value.size()));
  if (name && value.empty()) refuse("is empty");
  if (name && (value == "." || value == "..")) refuse("names a folder");
  for (size_t i = 0; i < value.size();) {
    const size_t n = utf8_length(value, i);
    const auto c = static_cast<unsigned char>(value[i]);
    if (n == 0) refuse(fmt::format("is not valid UTF-8 (byte 0x{:02X} at offset {})", c, i));
    if ((n == 1 && is_control(c)) || (n == 2 && is_c1_control(value, i)))
      refuse(fmt::format("holds a control character (at offset {})", i));
    if (name && (c == '/' || c == '\\'))
      refuse(fmt::format("holds a path separator '{}' (at offset {})", value[i], i));
    i += n;
  }
}

std::string error_line(std::string_view message) {
  constexpr size_t kHead = 1000, kTail = 800;
  const std::string line = escaped(message, /*keep_breaks=*/true);
  if (line.size() <= kHead + kTail + 100) return line;
  const std::string_view first = head(line, kHead), last = tail(line, kTail);
  return fmt::format("{} …[{} bytes left out]… {}", first, line.size() - first.size() - last.size(),
                     last);
}

}  // namespace lenlab
