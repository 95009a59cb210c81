// muparser wrapper: see expression.hpp for why the state lives on the heap.
#include "reparam/expression.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <muParser.h>

#include "core/error.hpp"

namespace lenlab {

struct Expression::State {
  // The parser reads each variable through a pointer into this vector: sized once, never resized.
  std::vector<double> values;
  mu::Parser parser;
};

Expression::Expression(const std::string& text, std::vector<std::string> variables)
    : text_(text), variables_(std::move(variables)), state_(std::make_unique<State>()) {
  State& s = *state_;
  s.values.assign(variables_.size(), 0.0);
  try {
    // No bytecode optimizer: it folds constant subexpressions with rules of its own, and muparser
    // 2.3.3 folds `a && b` and `a || b` as (int)a && (int)b, which is undefined behaviour for a
    // constant outside int's range ("x + (1e10 || 0)", found by fuzz/fuzz_expression) and gives 0
    // for "0.5 && 1", where evaluation gives 1. Unoptimized, an expression is evaluated as written.
    s.parser.EnableOptimizer(false);
    for (size_t i = 0; i < variables_.size(); ++i) s.parser.DefineVar(variables_[i], &s.values[i]);
    s.parser.SetExpr(text);
    // SetExpr only stores the text; the first Eval parses it (and reports unknown names).
    // A sentinel value of each variable detects an assignment such as "x=3".
    constexpr double kProbe = 0.6180339887498949;
    std::fill(s.values.begin(), s.values.end(), kProbe);
    s.parser.Eval();
    for (size_t i = 0; i < variables_.size(); ++i)
      if (s.values[i] != kProbe)
        throw UsageError(fmt::format("an expression must not assign to {}", variables_[i]));
    if (s.parser.GetNumResults() != 1) {
      throw UsageError(fmt::format("an expression must give one value, this one gives {}",
                                   s.parser.GetNumResults()));
    }
    if (s.parser.GetUsedVar().count(variables_.front()) == 0) {
      throw UsageError(
          fmt::format("the expression does not use the variable {}", variables_.front()));
    }
  } catch (const mu::Parser::exception_type& e) {
    std::string msg = e.GetMsg();
    if (!msg.empty() && msg.back() == '.') msg.pop_back();  // some messages end in '.', some not
    throw UsageError(msg);
  }
}

Expression::Expression(const Expression& other) : Expression(other.text_, other.variables_) {}

Expression& Expression::operator=(const Expression& other) {
  if (this != &other) *this = Expression(other.text_, other.variables_);
  return *this;
}

Expression::Expression(Expression&& other) noexcept = default;
Expression& Expression::operator=(Expression&& other) noexcept = default;
Expression::~Expression() = default;

namespace {

double evaluate(mu::Parser& parser) {
  try {
    return parser.Eval();
  } catch (const mu::Parser::exception_type&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace

double Expression::operator()(double x) const {
  if (!state_) return std::numeric_limits<double>::quiet_NaN();  // moved-from
  std::fill(state_->values.begin(), state_->values.end(), 0.0);
  state_->values.front() = x;
  return evaluate(state_->parser);
}

double Expression::operator()(const std::vector<double>& values) const {
  if (!state_ || values.size() != state_->values.size())  // moved-from, or a wrong count
    return std::numeric_limits<double>::quiet_NaN();
  std::copy(values.begin(), values.end(), state_->values.begin());
  return evaluate(state_->parser);
}

}  // namespace lenlab
