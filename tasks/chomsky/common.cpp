// What the Chomsky-hierarchy tasks share (tasks/chomsky/common.hpp).
#include "tasks/chomsky/common.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab::tasks::chomsky {

int checked_modulus(const TokenTaskSettings& settings, const char* task) {
  const int m = settings.modulus;
  if (m < 2 || m > kMaxModulus)
    throw UsageError(fmt::format(
        "--modulus (modulus) must be in 2..{} (task '{}': its digits are tokens), got {}",
        kMaxModulus, task, m));
  return m;
}

// Iterative, so that no length can exhaust the call stack: work items are popped last-in
// first-out, values kept on their own stack.
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

void set_little_endian(BigInt& x, const int32_t* bits, int n) {
  mpz_set_ui(x.z, 0);
  for (int i = 0; i < n; ++i)
    if (bits[i] == 1) mpz_setbit(x.z, static_cast<mp_bitcnt_t>(i));
}

void append_little_endian(const BigInt& x, std::vector<int32_t>& out) {
  const size_t n = mpz_sizeinbase(x.z, 2);
  for (size_t i = 0; i < n; ++i) out.push_back(mpz_tstbit(x.z, i));
}

}  // namespace lenlab::tasks::chomsky
