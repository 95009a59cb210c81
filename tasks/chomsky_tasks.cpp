// Drawing the Chomsky-hierarchy benchmark's sequences (tasks/chomsky_tasks.hpp has the formats).
// Every draw comes from lenlab's Rng; the distributions are the study's (docs/tasks.md), the order
// of the draws is lenlab's own.
#include "tasks/chomsky_tasks.hpp"

#include <gmp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tasks/token_tasks.hpp"

namespace lenlab {
namespace {

// Stack manipulation's and the binary tasks' tokens.
constexpr int32_t kPop = 2, kPush0 = 3, kPush1 = 4, kStackEnd = 5;
constexpr int32_t kBinaryOperator = 2, kBinaryEnd = 3;
// missing-duplicate-string's mark of the missing bit and its pad for an odd L.
constexpr int32_t kMissing = 2, kPad = 3;

// The token ids of an arithmetic task's symbols after its digits 0..m−1 (−1: not in its alphabet).
struct ArithmeticTokens {
  int32_t plus, minus, times, open, close, unknown, equals;
};

ArithmeticTokens arithmetic_tokens(TaskKind task, int m) {
  switch (task) {
    case TaskKind::kModularArithmetic:
      return {m, m + 1, m + 2, -1, -1, -1, -1};
    case TaskKind::kModularArithmeticBrackets:
      return {m, m + 1, m + 2, m + 3, m + 4, -1, -1};
    case TaskKind::kSolveEquation:  // the study's numbering: no × (its equations use + and −)
      return {m, m + 1, -1, m + 2, m + 3, m + 4, m + 5};
    default:
      throw std::logic_error("arithmetic_tokens: not an arithmetic task");
  }
}

int modulo(int64_t value, int m) {
  return static_cast<int>(((value % m) + m) % m);
}

// modular-arithmetic's value: digits at even offsets, operators between them; × binds first, as in
// the study: a − b is a + (−b), each +-separated term a product, the terms' sum taken mod m.
int chain_value(const int32_t* expression, int n_tokens, int m, const ArithmeticTokens& op) {
  int64_t sum = 0, term = expression[0];
  for (int i = 1; i + 1 < n_tokens; i += 2) {
    const int32_t digit = expression[i + 1];
    if (expression[i] == op.times) {
      term = term * digit % m;
    } else {
      sum = (sum + term) % m;
      term = expression[i] == op.plus ? digit : modulo(-digit, m);
    }
  }
  return modulo(sum + term, m);
}

// Appends a fully bracketed expression of exactly `length` tokens, the study's grammar
// (modular_arithmetic_brackets.py): 1 d, 2 −d, 3 (d), 4 (−d), and from 5 on ( left op right ) with
// left's length uniform in 1..length − 4; op uniform over + − (and × when op.times >= 0).
// Returns its value mod m. Iterative, so that no length can exhaust the call stack: work items
// are popped last-in first-out, values kept on their own stack.
int append_bracketed(int length, int m, const ArithmeticTokens& op, Rng& rng,
                     std::vector<int32_t>& out) {
  struct Item {
    enum Kind { kExpression, kToken, kCombine } kind;
    int32_t value;  // kExpression: its length; kToken: the token; kCombine: the operator
  };
  std::vector<Item> work = {{Item::kExpression, length}};
  std::vector<int> values;
  const int n_ops = op.times >= 0 ? 3 : 2;
  while (!work.empty()) {
    const Item item = work.back();
    work.pop_back();
    if (item.kind == Item::kToken) {
      out.push_back(item.value);
    } else if (item.kind == Item::kCombine) {
      const int b = values.back();
      values.pop_back();
      int& a = values.back();
      a = item.value == op.plus    ? modulo(a + b, m)
          : item.value == op.minus ? modulo(a - b, m)
                                   : modulo(int64_t{a} * b, m);
    } else if (item.value <= 4) {
      const int n = item.value;
      const int32_t d = static_cast<int32_t>(rng.uniform_int(0, m - 1));
      if (n >= 3) out.push_back(op.open);
      if (n % 2 == 0) out.push_back(op.minus);
      out.push_back(d);
      if (n >= 3) out.push_back(op.close);
      values.push_back(n % 2 == 0 ? modulo(-d, m) : d);
    } else {
      const int left = static_cast<int>(rng.uniform_int(1, item.value - 4));
      const int right = item.value - 3 - left;
      const int choice = static_cast<int>(rng.uniform_int(0, n_ops - 1));
      const int32_t o = choice == 0 ? op.plus : choice == 1 ? op.minus : op.times;
      // Popped in the reverse order: ( left o right ), then the two values combined.
      for (const Item next :
           {Item{Item::kCombine, o}, Item{Item::kToken, op.close}, Item{Item::kExpression, right},
            Item{Item::kToken, o}, Item{Item::kExpression, left}, Item{Item::kToken, op.open}})
        work.push_back(next);
    }
  }
  return values.back();
}

// Appends `n` uniform bits not all zero (a number in 1..2^n − 1, the study's draw) to `out`.
void append_nonzero_bits(int n, Rng& rng, std::vector<int32_t>& out) {
  const size_t begin = out.size();
  for (;;) {
    bool any = false;
    for (int i = 0; i < n; ++i) {
      out.push_back(rng.bit() ? 1 : 0);
      any = any || out.back() == 1;
    }
    if (any) return;
    out.resize(begin);
  }
}

// A GMP integer that clears itself.
struct BigInt {
  mpz_t z;
  BigInt() { mpz_init(z); }
  ~BigInt() { mpz_clear(z); }
  BigInt(const BigInt&) = delete;
  BigInt& operator=(const BigInt&) = delete;
};

// bits[0] is the least significant.
void set_little_endian(BigInt& x, const int32_t* bits, int n) {
  mpz_set_ui(x.z, 0);
  for (int i = 0; i < n; ++i)
    if (bits[i] == 1) mpz_setbit(x.z, static_cast<mp_bitcnt_t>(i));
}

// Appends x's bits, least significant first, without high zeros (x >= 1).
void append_little_endian(const BigInt& x, std::vector<int32_t>& out) {
  const size_t n = mpz_sizeinbase(x.z, 2);
  for (size_t i = 0; i < n; ++i) out.push_back(mpz_tstbit(x.z, i));
}

// Ends a sequence whose output has `slots` tokens: SEP, the answer, then FILL up to the slots.
// The answer rows are SEP's and the answer's but its last (each predicts the next answer token).
void end_with_output(const SpecialTokens& special, const std::vector<int32_t>& answer, int slots,
                     TokenSequence& seq) {
  seq.first = static_cast<int>(seq.tokens.size());
  seq.tokens.push_back(special.sep);
  seq.tokens.insert(seq.tokens.end(), answer.begin(), answer.end());
  seq.tokens.insert(seq.tokens.end(), slots - answer.size(), special.fill);
  seq.count = static_cast<int>(answer.size());
}

// The output's slots after SEP (the study's output length).
int64_t output_slots(TaskKind task, int length) {
  const int64_t l = length;
  switch (task) {
    case TaskKind::kEvenPairs:
    case TaskKind::kCycleNavigation:
    case TaskKind::kModularArithmetic:
    case TaskKind::kModularArithmeticBrackets:
    case TaskKind::kSolveEquation:
    case TaskKind::kMissingDuplicateString:
      return 1;
    case TaskKind::kStackManipulation:
    case TaskKind::kBinaryAddition:
      return l + 1;
    case TaskKind::kDuplicateString:
      return 2 * l;
    case TaskKind::kOddsFirst:
    case TaskKind::kBinaryMultiplication:
    case TaskKind::kBucketSort:
      return l;
    case TaskKind::kComputeSqrt:
      return (l + 1) / 2;
    default:
      break;
  }
  throw std::logic_error("output_slots: not a Chomsky-hierarchy task");
}

void require_chomsky(TaskKind task, const char* function) {
  if (!is_chomsky_task(task))
    throw std::logic_error(std::string(function) + ": '" + task_name(task) +
                           "' is not a Chomsky-hierarchy task");
}

}  // namespace

bool is_chomsky_task(TaskKind task) {
  return task >= TaskKind::kEvenPairs && task <= TaskKind::kBucketSort;
}

std::string chomsky_level(TaskKind task) {
  switch (task) {
    case TaskKind::kEvenPairs:
    case TaskKind::kModularArithmetic:
    case TaskKind::kParity:
    case TaskKind::kCycleNavigation:
      return "regular";
    case TaskKind::kStackManipulation:
    case TaskKind::kReverse:
    case TaskKind::kModularArithmeticBrackets:
    case TaskKind::kSolveEquation:
      return "deterministic context-free";
    case TaskKind::kDuplicateString:
    case TaskKind::kMissingDuplicateString:
    case TaskKind::kOddsFirst:
    case TaskKind::kBinaryAddition:
    case TaskKind::kBinaryMultiplication:
    case TaskKind::kComputeSqrt:
    case TaskKind::kBucketSort:
      return "context-sensitive";
    default:
      return "";
  }
}

bool chomsky_uses_modulus(TaskKind task) {
  return task == TaskKind::kCycleNavigation || task == TaskKind::kModularArithmetic ||
         task == TaskKind::kModularArithmeticBrackets || task == TaskKind::kSolveEquation;
}

bool chomsky_uses_n_symbols(TaskKind task) {
  return task == TaskKind::kDuplicateString || task == TaskKind::kOddsFirst ||
         task == TaskKind::kBucketSort;
}

int chomsky_content_symbols(TaskKind task, const TokenTaskSettings& settings) {
  require_chomsky(task, "chomsky_content_symbols");
  const int m = settings.modulus;
  if (chomsky_uses_modulus(task) && (m < 2 || m > kMaxModulus))
    throw UsageError(fmt::format(
        "--modulus (modulus) must be in 2..{} (task '{}': its digits are tokens), got {}",
        kMaxModulus, task_name(task), m));
  switch (task) {
    case TaskKind::kEvenPairs:
    case TaskKind::kComputeSqrt:
      return 2;
    case TaskKind::kCycleNavigation:
      return std::max(m, 3);
    case TaskKind::kModularArithmetic:
      return m + 3;
    case TaskKind::kModularArithmeticBrackets:
      return m + 5;
    case TaskKind::kSolveEquation:
      return m + 6;
    case TaskKind::kStackManipulation:
      return kStackEnd + 1;
    case TaskKind::kMissingDuplicateString:
    case TaskKind::kBinaryAddition:
    case TaskKind::kBinaryMultiplication:
      return 4;
    default:
      return settings.n_symbols;  // duplicate-string, odds-first, bucket-sort
  }
}

int chomsky_shortest_length(TaskKind task) {
  require_chomsky(task, "chomsky_shortest_length");
  switch (task) {
    case TaskKind::kSolveEquation:
    case TaskKind::kBinaryAddition:
    case TaskKind::kBinaryMultiplication:
      return 3;
    case TaskKind::kMissingDuplicateString:
      return 2;
    default:
      return 1;
  }
}

int64_t chomsky_sequence_tokens(TaskKind task, int length) {
  require_chomsky(task, "chomsky_sequence_tokens");
  // modular-arithmetic draws an odd number of tokens: L, or L − 1 for an even L (as the study).
  const int64_t input =
      task == TaskKind::kModularArithmetic && length % 2 == 0 ? length - 1 : length;
  return 1 + input + 1 + output_slots(task, length);  // BOS, input, SEP, output
}

int chomsky_answer_rows(TaskKind task, int length) {
  require_chomsky(task, "chomsky_answer_rows");
  return static_cast<int>(output_slots(task, length));
}

void draw_chomsky_sequence(TaskKind task, const TokenTaskSettings& settings,
                           const SpecialTokens& special, int length, Rng& rng, TokenSequence& seq) {
  require_chomsky(task, "draw_chomsky_sequence");
  const int m = settings.modulus;
  const int n = settings.n_symbols;
  std::vector<int32_t>& t = seq.tokens;
  std::vector<int32_t>& answer = seq.scratch;
  answer.clear();
  const size_t input_begin = t.size();  // after BOS
  switch (task) {
    case TaskKind::kEvenPairs: {
      for (int i = 0; i < length; ++i) t.push_back(rng.bit() ? 1 : 0);
      answer.push_back(t[input_begin] != t.back() ? 1 : 0);
      break;
    }
    case TaskKind::kCycleNavigation: {
      int position = 0;
      for (int i = 0; i < length; ++i) {
        const int32_t move = static_cast<int32_t>(rng.uniform_int(0, 2));
        t.push_back(move);
        position = modulo(position + move - 1, m);
      }
      answer.push_back(position);
      break;
    }
    case TaskKind::kModularArithmetic: {
      const ArithmeticTokens op = arithmetic_tokens(task, m);
      const int n_tokens = length % 2 == 1 ? length : length - 1;
      for (int i = 0; i < n_tokens; ++i)
        t.push_back(static_cast<int32_t>(i % 2 == 0 ? rng.uniform_int(0, m - 1)
                                                    : rng.uniform_int(op.plus, op.times)));
      answer.push_back(chain_value(t.data() + input_begin, n_tokens, m, op));
      break;
    }
    case TaskKind::kModularArithmeticBrackets: {
      answer.push_back(append_bracketed(length, m, arithmetic_tokens(task, m), rng, t));
      break;
    }
    case TaskKind::kSolveEquation: {
      // An expression of L − 2 tokens; a uniform index, moved forward (cyclically) to the first
      // digit at or after it, is replaced by x (so digits after long bracket runs are likelier,
      // as in the study); then = and the expression's value.
      const ArithmeticTokens op = arithmetic_tokens(task, m);
      const int value = append_bracketed(length - 2, m, op, rng, t);
      size_t at = input_begin + static_cast<size_t>(rng.uniform_int(0, length - 3));
      while (t[at] >= m) at = at + 1 == t.size() ? input_begin : at + 1;
      answer.push_back(t[at]);
      t[at] = op.unknown;
      t.push_back(op.equals);
      t.push_back(value);
      break;
    }
    case TaskKind::kStackManipulation: {
      // k bits (the stack, bottom first), k uniform in 1..L − 1 (1 at L = 1), then L − k actions
      // uniform over POP, PUSH 0, PUSH 1; a POP of the empty stack does nothing.
      const int k = length == 1 ? 1 : static_cast<int>(rng.uniform_int(1, length - 1));
      for (int i = 0; i < k; ++i) {
        t.push_back(rng.bit() ? 1 : 0);
        answer.push_back(t.back());
      }
      for (int i = k; i < length; ++i) {
        const int32_t action = static_cast<int32_t>(rng.uniform_int(kPop, kPush1));
        t.push_back(action);
        if (action != kPop)
          answer.push_back(action - kPush0);
        else if (!answer.empty())
          answer.pop_back();
      }
      std::reverse(answer.begin(), answer.end());  // top first
      answer.push_back(kStackEnd);
      break;
    }
    case TaskKind::kDuplicateString:
    case TaskKind::kOddsFirst:
    case TaskKind::kBucketSort: {
      for (int i = 0; i < length; ++i) t.push_back(static_cast<int32_t>(rng.uniform_int(0, n - 1)));
      const auto input = t.begin() + static_cast<std::ptrdiff_t>(input_begin);
      if (task == TaskKind::kDuplicateString) {
        answer.insert(answer.end(), input, t.end());
        answer.insert(answer.end(), input, t.end());
      } else if (task == TaskKind::kOddsFirst) {
        // The study's code: s[1::2] then s[::2] (0-based), so s2 s4 .. before s1 s3 ..
        for (int start : {1, 0})
          for (int i = start; i < length; i += 2) answer.push_back(input[i]);
      } else {
        answer.assign(input, t.end());
        std::sort(answer.begin(), answer.end());
      }
      break;
    }
    case TaskKind::kMissingDuplicateString: {
      const int half = length / 2;
      for (int i = 0; i < half; ++i) t.push_back(rng.bit() ? 1 : 0);
      for (int i = 0; i < half; ++i) t.push_back(t[input_begin + i]);
      const size_t at = input_begin + static_cast<size_t>(rng.uniform_int(0, 2 * half - 1));
      answer.push_back(t[at]);
      t[at] = kMissing;
      if (length % 2 == 1) t.push_back(kPad);
      break;
    }
    case TaskKind::kBinaryAddition:
    case TaskKind::kBinaryMultiplication: {
      // a: p bits, b: L − 1 − p bits, p uniform in 1..L − 2, each number uniform in 1..2^bits − 1
      // (zero-filled to its bits, so its high bits may be 0), little-endian.
      const int p = static_cast<int>(rng.uniform_int(1, length - 2));
      const int q = length - 1 - p;
      append_nonzero_bits(p, rng, t);
      t.push_back(kBinaryOperator);
      append_nonzero_bits(q, rng, t);
      BigInt a, b;
      set_little_endian(a, t.data() + input_begin, p);
      set_little_endian(b, t.data() + input_begin + p + 1, q);
      if (task == TaskKind::kBinaryAddition)
        mpz_add(a.z, a.z, b.z);
      else
        mpz_mul(a.z, a.z, b.z);
      append_little_endian(a, answer);
      answer.push_back(kBinaryEnd);
      break;
    }
    case TaskKind::kComputeSqrt: {
      append_nonzero_bits(length, rng, t);  // read big-endian: t[input_begin] is the top bit
      BigInt x;
      for (int i = 0; i < length; ++i)
        if (t[input_begin + i] == 1) mpz_setbit(x.z, static_cast<mp_bitcnt_t>(length - 1 - i));
      mpz_sqrt(x.z, x.z);
      const int slots = (length + 1) / 2;
      for (int i = slots - 1; i >= 0; --i) answer.push_back(mpz_tstbit(x.z, i));
      break;
    }
    default:
      throw std::logic_error("draw_chomsky_sequence: not a Chomsky-hierarchy task");
  }
  end_with_output(special, answer, static_cast<int>(output_slots(task, length)), seq);
}

}  // namespace lenlab
