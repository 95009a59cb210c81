// muparser wrapper: see expression.hpp for why the state lives on the heap.
#include "reparam/expression.hpp"

#include <limits>

#include <fmt/format.h>
#include <muParser.h>

#include "core/error.hpp"

namespace lenlab {

struct Expression::State {
  double x = 0.0;  // the parser reads x through a pointer to this member
  mu::Parser parser;
};

Expression::Expression(const std::string& text) : text_(text), state_(std::make_unique<State>()) {
  State& s = *state_;
  try {
    // No bytecode optimizer: it folds constant subexpressions with rules of its own, and muparser
    // 2.3.3 folds `a && b` and `a || b` as (int)a && (int)b, which is undefined behaviour for a
    // constant outside int's range ("x + (1e10 || 0)", found by fuzz/fuzz_expression) and gives 0
    // for "0.5 && 1", where evaluation gives 1. Unoptimized, an expression is evaluated as written.
    s.parser.EnableOptimizer(false);
    s.parser.DefineVar("x", &s.x);
    s.parser.SetExpr(text);
    // SetExpr only stores the text; the first Eval parses it (and reports unknown names).
    // A sentinel value of x detects an assignment such as "x=3".
    constexpr double kProbe = 0.6180339887498949;
    s.x = kProbe;
    s.parser.Eval();
    if (s.x != kProbe) throw UsageError("an expression must not assign to x");
    if (s.parser.GetNumResults() != 1) {
      throw UsageError(fmt::format("an expression must give one value, this one gives {}",
                                   s.parser.GetNumResults()));
    }
    if (s.parser.GetUsedVar().count("x") == 0) {
      throw UsageError("the expression does not use the variable x");
    }
  } catch (const mu::Parser::exception_type& e) {
    std::string msg = e.GetMsg();
    if (!msg.empty() && msg.back() == '.') msg.pop_back();  // some messages end in '.', some not
    throw UsageError(msg);
  }
}

Expression::Expression(const Expression& other) : Expression(other.text_) {}

Expression& Expression::operator=(const Expression& other) {
  if (this != &other) *this = Expression(other.text_);
  return *this;
}

Expression::Expression(Expression&& other) noexcept = default;
Expression& Expression::operator=(Expression&& other) noexcept = default;
Expression::~Expression() = default;

double Expression::operator()(double x) const {
  if (!state_) return std::numeric_limits<double>::quiet_NaN();  // moved-from
  state_->x = x;
  try {
    return state_->parser.Eval();
  } catch (const mu::Parser::exception_type&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace lenlab
