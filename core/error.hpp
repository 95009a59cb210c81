#pragma once
// One exception type for every mistake a user can make (bad flag, bad config, bad expression).
// The CLI catches it, prints `lenlab: error: <what>` on one line and exits with status 2.
// Programming errors (broken invariants) are not UsageError: they use assert or std::logic_error.
#include <stdexcept>
#include <string>
#include <vector>

namespace lenlab {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The machine failed although the input was fine: a full disk, an I/O error (a GPU error has its
// own type). The CLI prints `lenlab: error: <what>` and exits with status 1, not 2.
class SystemFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `check()`'s result, its UsageError told as the mistake of `flag` ("--pe: unknown positional
// encoding 'x'; ..."): a parser shared by many settings (a task name, an expression, a rope
// scaling) cannot know which flag or config key gave it the value. A message that names the flag
// already is left as it is.
template <class Check>
auto for_flag(const std::string& flag, Check&& check) -> decltype(check()) {
  try {
    return check();
  } catch (const UsageError& e) {
    const std::string message = e.what();
    if (message.find(flag) != std::string::npos) throw;
    throw UsageError(flag + ": " + message);
  }
}

// `check()`'s result, its UsageError told as a mistake in `source` (a manifest read back, a config
// file): "runs/x/manifest.json: --pe: unknown positional encoding 'x'". No prefix for "".
template <class Check>
auto in_source(const std::string& source, Check&& check) -> decltype(check()) {
  try {
    return check();
  } catch (const UsageError& e) {
    if (source.empty()) throw;
    throw UsageError(source + ": " + e.what());
  }
}

// "a, b or c": for error messages that list the valid choices.
inline std::string join_choices(const std::vector<std::string>& choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += (i + 1 == choices.size()) ? " or " : ", ";
    out += "'" + choices[i] + "'";
  }
  return out;
}

}  // namespace lenlab
