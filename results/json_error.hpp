#pragma once
// The JSON library's exception text for a user's error message: without its
// "[json.exception.type_error.302] " prefix, which names nothing a user can act on.
#include <nlohmann/json.hpp>
#include <string>

namespace lenlab {

inline std::string json_reason(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t close = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && close != std::string::npos
             ? what.substr(close + 2)
             : what;
}

}  // namespace lenlab
