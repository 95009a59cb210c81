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

TEST_CASE("a key nested deeper than 64 tables is refused before toml++ recurses on it") {
  const auto dotted = [](int parts, const std::string& sep) {
    std::string key = "a";
    for (int i = 1; i < parts; ++i) key += sep + "a";
    return key;
  };
  // lenlab's own depth, and the limit exactly, pass (with spaces and quoted parts too).
  CHECK(accepted("[figures.a]\nvary = \"pe\"\n[figures.\"b c\".x]\n"));
  CHECK(accepted("[" + dotted(63, ".") + "]\nx = 1\n"));  // 63 parts and the header
  CHECK(accepted(dotted(64, " . ") + " = 1\n"));
  CHECK(accepted("a = {" + dotted(63, ".") + " = 1}\n"));
  // Deeper: a header, a dotted key, one inside inline tables, one after others on its line.
  CHECK_FALSE(accepted("[" + dotted(64, ".") + "]\n"));
  CHECK_FALSE(accepted(dotted(65, ".") + " = 1\n"));
  CHECK_FALSE(accepted("a = {b = {" + dotted(63, ".") + " = 1}}\n"));
  CHECK_FALSE(accepted("[" + dotted(50000, ".") + "]\n"));  // the probe's crash: 100 KB
  CHECK_FALSE(accepted("[" + dotted(65, ".\"q\".") + "]\n"));
  // The count starts again for each key: many shallow keys pass.
  std::string many;
  for (int i = 0; i < 200; ++i) many += "[t" + std::to_string(i) + "." + dotted(10, ".") + "]\n";
  CHECK(accepted(many));
  CHECK(accepted("a = {x.y = 1, " + dotted(63, ".") + " = 2}\n"));
  try {
    lenlab::check_ascii_outside_strings("x = 1\n" + dotted(65, ".") + " = 1\n", "t.toml");
    FAIL("accepted");
  } catch (const lenlab::UsageError& e) {
    CHECK(std::string(e.what()) ==
          "t.toml:2: a key nested more than 64 tables deep; lenlab's configs nest 3 "
          "(figures.NAME.setting)");
  }
}
