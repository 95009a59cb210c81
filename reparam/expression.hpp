#pragma once
// A real function of one variable x, given as a muparser expression ("x^-0.5", "log(x+1)") and
// parsed once; or of several named variables (a positional bias in the distance d and the head h,
// models/position_bias.hpp). muparser's Parser keeps a raw pointer to the variable it reads, so the
// parser and the variable live together on the heap (moves keep that pointer valid) and a copy
// parses the text again into its own parser (a copy never points into another instance).
//
// Thread safety: evaluation mutates the parser's internal stack, so one instance must be used by
// one thread at a time; copies are independent and can be used from different threads.
#include <memory>
#include <string>
#include <vector>

namespace lenlab {

class Expression {
 public:
  // Throws UsageError with muparser's message (e.g. 'Unexpected operator "*" found at position 2')
  // when the text does not parse, uses a name other than the variables (default: x), gives several
  // results ("x, 2"), assigns to a variable, or does not depend on the first variable.
  explicit Expression(const std::string& text, std::vector<std::string> variables = {"x"});
  Expression(const Expression& other);
  Expression& operator=(const Expression& other);
  Expression(Expression&& other) noexcept;
  Expression& operator=(Expression&& other) noexcept;
  ~Expression();

  // The value at x (the first variable; the others 0); NaN if muparser fails at run time (never
  // throws).
  double operator()(double x) const;
  // The value at the variables' values, in their order (as many as there are variables).
  double operator()(const std::vector<double>& values) const;
  const std::string& text() const { return text_; }

 private:
  struct State;  // keeps <muParser.h> out of this header
  std::string text_;
  std::vector<std::string> variables_;
  std::unique_ptr<State> state_;
};

}  // namespace lenlab
