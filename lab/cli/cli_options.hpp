#pragma once
// How lenlab's subcommands declare options (CLI11): integers are decimal only.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>

namespace lenlab {

// CLI11 2.1 reads integers with base detection: "010" would be 8 and "0x10" 16. Every integer
// flag of lenlab is decimal: this validator accepts only decimal digits and drops leading zeros.
const CLI::Validator& decimal_integer();

// An integer from lo to hi: "must be an integer from lo to hi" (CLI11 prefixes the flag).
CLI::Validator int_range(long long lo, long long hi, const std::string& why = "");

// An unsigned integer (a seed): digits only, so "-1" is refused instead of wrapping to 2^64 - 1,
// and at most 2^64 - 1.
const CLI::Validator& unsigned_integer();

// add_option, with the decimal rule for integer settings and their type's range, so that a value
// the type cannot hold is refused with the range instead of "could not convert".
// `lo` narrows a signed setting's range from below (1 for counts); finer limits that configs share
// are resolve()'s (train/run_settings.hpp).
template <class T>
CLI::Option* add_setting(CLI::App& cmd, const std::string& name, T& value, const std::string& help,
                         long long lo = std::numeric_limits<long long>::min()) {
  CLI::Option* opt = cmd.add_option(name, value, help);
  if constexpr (std::is_integral_v<T>) {
    opt->transform(decimal_integer());
    if constexpr (std::is_unsigned_v<T>)
      opt->check(unsigned_integer());
    else
      opt->check(int_range(std::max<long long>(lo, std::numeric_limits<T>::min()),
                           std::numeric_limits<T>::max()));
  }
  return opt;
}

}  // namespace lenlab
