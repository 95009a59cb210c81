#pragma once
// JSON that lenlab reads from outside (a run's manifest.json, eval.json, a safetensors header, a
// request to `lenlab serve`): parsed with a limit on nesting, checked as the parser reads, so that
// nothing recursive (a copy, a dump, an error message) ever meets a document nested 100 000 deep
// (found by fuzzing: the server and `lenlab eval` overflowed their stacks, exit 139).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace lenlab {

// Deeper than any document lenlab writes or a request needs (a manifest: 4 levels).
inline constexpr int kMaxJsonDepth = 32;

// The JSON library's message without its "[json.exception.parse_error.101] " prefix, which names
// nothing a user can act on.
inline std::string json_reason(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t close = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && close != std::string::npos
             ? what.substr(close + 2)
             : what;
}

// text as Json (nlohmann::json or ordered_json). UsageError "<what>: not valid JSON (<reason>)",
// or "<what>: JSON nested more than 32 levels deep" (the reason may quote the bad bytes: print
// it through error_line, core/text_rule.hpp, or escape it before it goes into JSON).
template <class Json = nlohmann::ordered_json>
Json parse_json_input(std::string_view text, std::string_view what) {
  struct TooDeep {};
  const typename Json::parser_callback_t limit = [](int depth, typename Json::parse_event_t,
                                                    Json&) {
    if (depth > kMaxJsonDepth) throw TooDeep{};
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), limit);
  } catch (const TooDeep&) {
    throw UsageError(std::string(what) + ": JSON nested more than " +
                     std::to_string(kMaxJsonDepth) + " levels deep; lenlab's files need 4");
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string(what) + ": not valid JSON (" + json_reason(e) + ")");
  }
}

}  // namespace lenlab
