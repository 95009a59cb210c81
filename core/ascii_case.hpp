#pragma once
// ASCII case folding, for names a person types (host names, codes, class names): bytes outside
// ASCII are left as they are (a UTF-8 letter is compared as typed).
#include <cctype>
#include <string>

namespace lenlab {

inline std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

inline std::string ascii_upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace lenlab
