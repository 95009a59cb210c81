#pragma once
// JSON that lenlab reads from outside (a run's manifest.json, eval.json, selection.json, a
// safetensors header, a request to `lenlab serve`): parsed with a limit on nesting, checked as the
// parser reads, so that nothing recursive (a copy, a dump, an error message) ever meets a document
// nested 100 000 deep (found by fuzzing: the server and `lenlab eval` overflowed their stacks,
// exit 139).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/text_rule.hpp"

namespace lenlab {

// Deeper than any document lenlab writes (a manifest: 4 levels).
inline constexpr int kMaxJsonDepth = 32;
// A flat object: the live page's request, whose values are numbers and strings.
inline constexpr int kFlatJsonDepth = 1;

// The JSON library's message without its "[json.exception.parse_error.101] " prefix, which names
// nothing a user can act on.
inline std::string json_reason(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t close = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && close != std::string::npos
             ? what.substr(close + 2)
             : what;
}

// text as Json (nlohmann::json or ordered_json), nested at most max_depth levels. Otherwise a
// UsageError, printable as it is (the bad bytes the parser quotes are escaped, so the message is
// valid UTF-8 and can go into a JSON reply):
//   "<what>: not valid JSON (<reason>)"
//   "<what>: not valid UTF-8, which JSON must be (<reason>)"
//   "<what>: JSON nested more than 32 levels deep; lenlab's files need 4"
//   "<what> must be a flat JSON object; a value nests arrays or objects"   (max_depth 1)
template <class Json = nlohmann::ordered_json>
Json parse_json_input(std::string_view text, std::string_view what, int max_depth = kMaxJsonDepth) {
  struct TooDeep {};
  const typename Json::parser_callback_t limit = [max_depth](int depth,
                                                             typename Json::parse_event_t, Json&) {
    if (depth > max_depth) throw TooDeep{};
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), limit);
  } catch (const TooDeep&) {
    if (max_depth == kFlatJsonDepth)
      throw UsageError(std::string(what) +
                       " must be a flat JSON object; a value nests arrays or objects");
    throw UsageError(std::string(what) + ": JSON nested more than " + std::to_string(max_depth) +
                     " levels deep; lenlab's files need 4");
  } catch (const nlohmann::json::exception& e) {
    const std::string reason = json_reason(e);
    const bool utf8 = reason.find("UTF-8") != std::string::npos;
    throw UsageError(std::string(what) +
                     (utf8 ? ": not valid UTF-8, which JSON must be (" : ": not valid JSON (") +
                     error_line(reason) + ")");
  }
}

}  // namespace lenlab
