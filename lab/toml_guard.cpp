#include "lab/toml_guard.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"

namespace lenlab {

void check_ascii_outside_strings(const std::string& text, const std::string& source) {
  enum { kCode, kComment, kBasic, kLiteral, kMultiBasic, kMultiLiteral } state = kCode;
  int line = 1;
  // The last character of code before this one, spaces and tabs aside ('\n' at a line's start). A
  // quote opens a string only where TOML lets a string or quoted key stand (after '=', '[', ',',
  // '{', '.' or at a line's start): elsewhere, as in `9'99`, toml++ reads it as part of a bare
  // value and runs on to the next character, so what follows must still be checked as code.
  char before = '\n';
  const auto at = [&](size_t i, const char* s) { return text.compare(i, std::strlen(s), s) == 0; };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      if (state == kComment || state == kBasic || state == kLiteral) state = kCode;
      if (state == kCode) before = '\n';
      continue;
    }
    switch (state) {
      case kCode: {
        if (static_cast<unsigned char>(c) >= 0x80)
          throw UsageError(fmt::format(
              "{}:{}: a non-ASCII character outside a string or comment; TOML allows one only "
              "inside quotes or after #",
              source, line));
        const bool string_may_start = before != 0 && std::strchr("=[,{.\n", before) != nullptr;
        if (c != ' ' && c != '\t') before = c;
        if (c == '#') {
          state = kComment;
        } else if (!string_may_start) {
          // a quote here is no string's start (see `before`)
        } else if (at(i, "\"\"\"")) {
          state = kMultiBasic;
          i += 2;
        } else if (at(i, "'''")) {
          state = kMultiLiteral;
          i += 2;
        } else if (c == '"') {
          state = kBasic;
        } else if (c == '\'') {
          state = kLiteral;
        }
        break;
      }
      case kBasic:
      case kMultiBasic:
        if (c == '\\' && state == kMultiBasic) {
          // A line-ending backslash trims the whitespace after it; toml++ 3.3.0 reaches the same
          // __builtin_unreachable() when that run ends at a non-ASCII character.
          size_t j = i + 1;
          while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
          if (j < text.size() && (text[j] == '\n' || text[j] == '\r')) {
            while (j < text.size() && std::strchr(" \t\r\n", text[j])) line += text[j++] == '\n';
            if (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x80)
              throw UsageError(fmt::format(
                  "{}:{}: a non-ASCII character right after a line-ending backslash in a "
                  "multi-line string; put an ASCII character first",
                  source, line));
            i = j - 1;
          } else {
            ++i;  // an escape: the next character does not end the string
          }
        } else if (c == '\\') {
          ++i;  // an escape: the next character does not end the string
        } else if (state == kBasic && c == '"') {
          state = kCode;
          before = c;
        } else if (state == kMultiBasic && at(i, "\"\"\"")) {
          state = kCode;
          before = c;
          i += 2;
        }
        break;
      case kLiteral:
        if (c == '\'') {
          state = kCode;
          before = c;
        }
        break;
      case kMultiLiteral:
        if (at(i, "'''")) {
          state = kCode;
          before = c;
          i += 2;
        }
        break;
      case kComment:
        break;
    }
  }
}

}  // namespace lenlab
