#pragma once
// How lenlab's subcommands declare options (CLI11): integers are decimal only.
#include <CLI/CLI.hpp>
#include <string>
#include <type_traits>

namespace lenlab {

// CLI11 2.1 reads integers with base detection: "010" would be 8 and "0x10" 16. Every integer
// flag of lenlab is decimal: this validator accepts only decimal digits and drops leading zeros.
const CLI::Validator& decimal_integer();

// add_option, with the decimal rule for integer settings.
template <class T>
CLI::Option* add_setting(CLI::App& cmd, const std::string& name, T& value,
                         const std::string& help) {
  CLI::Option* opt = cmd.add_option(name, value, help);
  if constexpr (std::is_integral_v<T>) opt->transform(decimal_integer());
  return opt;
}

}  // namespace lenlab
