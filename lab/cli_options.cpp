#include "lab/cli_options.hpp"

#include <regex>

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

}  // namespace lenlab
