#include "lab/cli/cli_options.hpp"

#include <regex>
#include <stdexcept>
#include <string>

namespace lenlab {

const CLI::Validator& decimal_integer() {
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        static const std::regex decimal("[+-]?[0-9]+");
        if (!std::regex_match(text, decimal)) return "'" + text + "' is not a decimal integer";
        const size_t digits = text.find_first_not_of("+-");
        const size_t first = text.find_first_not_of('0', digits);
        text = text.substr(0, digits) + (first == std::string::npos ? "0" : text.substr(first));
        return "";
      },
      "", "decimal");
  return validator;
}

const CLI::Validator& unsigned_integer() {
  static const CLI::Validator validator(
      [](std::string& text) -> std::string {
        const std::string digits = text.substr(text.rfind('+', 0) == 0 ? 1 : 0);
        bool ok = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
        if (ok) {
          try {
            (void)std::stoull(digits);
          } catch (const std::out_of_range&) {
            ok = false;
          }
        }
        return ok ? "" : "must be an integer from 0 to 18446744073709551615, got " + text;
      },
      "", "unsigned");
  return validator;
}

CLI::Validator int_range(long long lo, long long hi, const std::string& why) {
  return CLI::Validator(
      [lo, hi, why](std::string& text) -> std::string {
        long long v = 0;
        try {
          size_t used = 0;
          v = std::stoll(text, &used);
          if (used != text.size()) throw std::invalid_argument(text);
        } catch (const std::exception&) {
          return "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                 why + ", got '" + text + "'";
        }
        if (v < lo || v > hi)
          return "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                 why + ", got " + text;
        return "";
      },
      "", "range");
}

}  // namespace lenlab
