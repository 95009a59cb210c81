// Tests for lab/experiment/toml_guard: non-ASCII text is refused where toml++ 3.3.0 would reach
// __builtin_unreachable() (code, and right after a multi-line string's line-ending backslash) and
// accepted everywhere TOML allows it (strings of the four kinds, quoted keys, comments).
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "lab/experiment/toml_guard.hpp"

namespace {

bool accepted(const std::string& text) {
  try {
    lenlab::check_ascii_outside_strings(text, "t.toml");
    return true;
  } catch (const lenlab::UsageError&) {
    return false;
  }
}

}  // namespace

TEST_CASE("non-ASCII text where TOML allows it passes the guard") {
  const std::string e = "\xc3\xa9";  // é
  CHECK(accepted("title = \"L" + e + "ngen\"\n"));
  CHECK(accepted("title = 'L" + e + "ngen'\n"));
  CHECK(accepted("title = \"\"\"\nL" + e + "ngen\n\"\"\"\n"));
  CHECK(accepted("title = '''\nL" + e + "ngen\n'''\n"));
  CHECK(accepted("title = \"\"\"\\\n  x" + e + "\"\"\"\n"));  // ASCII first after the backslash
  CHECK(accepted("\"k" + e + "\" = 1\n"));                    // a quoted key
  CHECK(accepted("a.\"k" + e + "\" = 1\n"));                  // a dotted one
  CHECK(accepted("values = [\"a" + e + "\", 'b" + e + "',\n  \"c" + e + "\"]\n"));
  CHECK(accepted("t = { \"k" + e + "\" = 'v" + e + "' }\n"));
  CHECK(accepted("seeds = [1] # " + e + "\n# " + e + "\n"));
  CHECK(accepted("a = \"x\\\"" + e + "\"\n"));  // an escaped quote does not end the string
  CHECK(accepted("title=\"" + e + "\"\nt={k='" + e + "'}\n"));  // no spaces around '='
  CHECK(accepted("[figures.\"" + e + "\"]\n[[x]]\na = 1979-05-27 07:32:00 # " + e + "\n"));
}

TEST_CASE("non-ASCII text where toml++ would read it as code is refused, with its line") {
  const std::string e = "\xc3\xa9";
  CHECK_FALSE(accepted("seeds = [1, " + e + "]\n"));
  CHECK_FALSE(accepted("a = 1\nb = " + e + "\n"));
  CHECK_FALSE(accepted(e + " = 1\n"));
  CHECK_FALSE(accepted("a = \"x\"\nb = 2" + e + "\n"));  // a string ends at its quote
  CHECK_FALSE(accepted("a = \"x\n" + e + "\n"));         // and a one-line string at its line's end
  // Found by fuzzing: a quote inside a bare value opens no string; toml++ reads on past it.
  CHECK_FALSE(accepted("seeds = [9'9" + e + "]\n"));
  CHECK_FALSE(accepted("seeds = 1X/x[\"no" + e + "\"]\n"));
  CHECK_FALSE(accepted("a = 1=\"" + e + "\"\n"));
  CHECK_FALSE(accepted("a = \"x\"'" + e + "'\n"));
  CHECK_FALSE(accepted("title = \"\"\"\\\n  \n" + e + "\"\"\"\n"));  // right after the backslash
  CHECK_FALSE(accepted("title = \"\"\"\\" + e + "\"\"\"\n"));        // found by fuzzing: no escape
  CHECK_FALSE(accepted("title = \"\"\"\\  " + e + "\"\"\"\n"));
  CHECK_FALSE(accepted("title = \"\\" + e + "\"\n"));
  // Found by fuzzing: toml++ reads """ where a key starts as a multi-line string, escapes and all.
  CHECK_FALSE(accepted("\"\"\"k \\" + e + "\"\"\" = 1\n"));
  try {
    lenlab::check_ascii_outside_strings("a = 1\n\nb = " + e + "\n", "t.toml");
    FAIL("refused nothing");
  } catch (const lenlab::UsageError& err) {
    CHECK(std::string(err.what()).find("t.toml:3:") == 0);
  }
}
