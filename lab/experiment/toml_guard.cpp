#include "lab/experiment/toml_guard.hpp"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace lenlab {
namespace {

bool is_ascii(char c) {
  return static_cast<unsigned char>(c) < 0x80;
}

bool is_bare_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// Where toml++ 3.3.0 ends a bare value (true, 1.5, 1979-05-27, ...): it reads ahead to the first
// of these, asking of every character before it whether it is whitespace.
bool ends_bare_value(char c) {
  return std::strchr(" \t\r\n,]}#", c) != nullptr;
}

}  // namespace

// A small TOML lexer that follows toml++'s reading closely enough to know which characters it
// reads as code: strings open only where a key or a value may start, and a bare value runs, as
// toml++ reads it, up to its terminator, quotes and brackets included.
void check_ascii_outside_strings(const std::string& text, const std::string& source) {
  enum State {
    kCode,
    kBareKey,
    kBareValue,
    kComment,
    kBasic,
    kLiteral,
    kMultiBasic,
    kMultiLiteral
  };
  enum Expect { kNothing, kKey, kValue };  // what a token starting here would be
  State state = kCode;
  Expect expect = kKey;
  bool string_is_key = false;  // the open string is a quoted key
  bool after_key = false;      // the last token was a key: a '.' continues it
  bool dotted = false;         // the last token was a '.' after a key: the next key continues it
  int key_parts = 0;           // parts of the dotted key being read
  std::vector<char> open;      // '[' arrays, '{' inline tables, 'h' a [table] header
  int line = 1;
  const auto at = [&](size_t i, const char* s) { return text.compare(i, std::strlen(s), s) == 0; };
  const auto refuse = [&](const char* what) {
    throw UsageError(fmt::format("{}:{}: a non-ASCII character {}", source, line, what));
  };
  // toml++ 3.3.0 recurses once per table a key opens: a header of 50 000 dotted parts overflows
  // the stack (found by a probe; the fuzzers then stopped at 4 KB inputs). Refuse a key that
  // nests deeper than any config needs, counting the inline tables and arrays it stands in.
  const auto start_key = [&] {
    key_parts = dotted ? key_parts + 1 : 1;
    dotted = false;
    const int depth = key_parts + static_cast<int>(open.size());
    if (depth > kMaxTomlDepth)
      throw UsageError(
          fmt::format("{}:{}: a key nested more than {} tables deep; lenlab's configs nest 3 "
                      "(figures.NAME.setting)",
                      source, line, kMaxTomlDepth));
  };
  const auto close_string = [&] {
    state = kCode;
    expect = kNothing;
    after_key = string_is_key;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' && state != kMultiBasic && state != kMultiLiteral) {
      ++line;
      state =
          kCode;  // a comment, bare token or one-line string ends here (toml++ rejects the last)
      while (!open.empty() && open.back() != '[') open.pop_back();  // headers and tables end too
      if (open.empty()) expect = kKey;
      after_key = false;
      dotted = false;
      continue;
    }
    switch (state) {
      case kBareKey:
        if (is_bare_key_char(c)) break;
        state = kCode;  // the key ends: this character is read as code
        expect = kNothing;
        after_key = true;
        [[fallthrough]];
      case kCode:
        if (!is_ascii(c))
          refuse("outside a string or comment; TOML allows one only inside quotes or after #");
        if (c == ' ' || c == '\t' || c == '\r') break;
        if (c == '#') {
          state = kComment;
        } else if (c == '"' || c == '\'') {
          if (expect == kNothing) {  // no string starts here: toml++ stops at it, or reads on
            state = kBareValue;
            break;
          }
          string_is_key = expect == kKey;
          if (string_is_key) start_key();
          const bool multi = at(i, "\"\"\"") || at(i, "'''");  // toml++ reads one as a key too
          state = c == '"' ? (multi ? kMultiBasic : kBasic) : (multi ? kMultiLiteral : kLiteral);
          if (multi) i += 2;
        } else if (c == '=') {
          expect = kValue;
          after_key = false;
        } else if (c == '.') {
          expect = after_key ? kKey : kNothing;
          dotted = after_key;
          after_key = false;
        } else if (c == '[') {
          if (expect == kValue) {
            open.push_back('[');
          } else if (expect == kKey && open.empty()) {  // a [table] or [[array of tables]] header
            open.push_back('h');
            if (at(i, "[[")) ++i;
            expect = kKey;
          } else {
            expect = kNothing;
          }
        } else if (c == '{') {
          if (expect == kValue) open.push_back('{');
          expect = expect == kValue ? kKey : kNothing;
        } else if (c == ',') {
          expect = open.empty() ? kNothing : open.back() == '[' ? kValue : kKey;
          after_key = false;
        } else if (c == ']' || c == '}') {
          if (!open.empty() && (open.back() == '{') == (c == '}')) open.pop_back();
          if (c == ']' && at(i, "]]")) ++i;
          expect = kNothing;
          after_key = false;
        } else {
          if (expect == kKey) start_key();
          state = expect == kKey ? kBareKey : kBareValue;
          after_key = false;
        }
        break;
      case kBareValue:
        if (!is_ascii(c))
          refuse("outside a string or comment; TOML allows one only inside quotes or after #");
        if (ends_bare_value(c)) {
          state = kCode;
          expect = kNothing;
          --i;  // the terminator is read as code
        }
        break;
      case kBasic:
      case kMultiBasic:
        if (c == '\\') {
          // toml++ 3.3.0 asks whether the character after a backslash is whitespace (in a
          // multi-line string, after the spaces that may follow it): the same
          // __builtin_unreachable() when it is non-ASCII. No escape starts with one anyway.
          size_t j = i + 1;
          if (state == kMultiBasic)
            while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
          if (j < text.size() && !is_ascii(text[j]))
            refuse("right after a backslash in a string; TOML has no such escape");
          if (state == kMultiBasic && j < text.size() && (text[j] == '\n' || text[j] == '\r')) {
            // A line-ending backslash trims all whitespace up to the next character, which toml++
            // asks the same question of.
            while (j < text.size() && std::strchr(" \t\r\n", text[j])) line += text[j++] == '\n';
            if (j < text.size() && !is_ascii(text[j]))
              refuse(
                  "right after a line-ending backslash in a multi-line string; put an ASCII "
                  "character first");
            i = j - 1;
          } else {
            ++i;  // an escape: the next character does not end the string
          }
        } else if (state == kBasic && c == '"') {
          close_string();
        } else if (state == kMultiBasic && at(i, "\"\"\"")) {
          close_string();
          i += 2;
        } else if (c == '\n') {
          ++line;
        }
        break;
      case kLiteral:
        if (c == '\'') close_string();
        break;
      case kMultiLiteral:
        if (at(i, "'''")) {
          close_string();
          i += 2;
        } else if (c == '\n') {
          ++line;
        }
        break;
      case kComment:
        break;
    }
  }
}

}  // namespace lenlab
