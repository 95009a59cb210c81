#pragma once
// Which special tokens surround the bits in the linear-attention theory, and what that makes the
// model see. The paper's Appendix B.1 has none: the prediction for x[:l] is read at the last bit.
// lenlab's transformers read [BOS, b_1 .. b_l, EOS] at the EOS token (docs/model.md), so the
// theory offers every combination:
//
//   layout    sequence                  query (last token)  attended key types   k (tokens)
//   none      b_1 .. b_l                b_l  (0 or 1)       0, 1                 l
//   bos       BOS b_1 .. b_l            b_l  (0 or 1)       0, 1, BOS            l + 1
//   eos       b_1 .. b_l EOS            EOS                 0, 1, EOS            l + 1
//   bos,eos   BOS b_1 .. b_l EOS        EOS                 0, 1, BOS, EOS       l + 2
//
// The model's output at the last token is g = (1/k) sum_i P[query type][type of token i]
// (docs/theory.md), so the rows of P are the query types and its columns the key types above.
#include <string>
#include <vector>

#include "tasks/batch.hpp"

namespace lenlab {

enum class TokenLayout { kNone, kBos, kEos, kBosEos };

// "none", "bos", "eos" or "bos,eos"; anything else throws UsageError naming it and the choices.
TokenLayout parse_token_layout(const std::string& name);
std::string token_layout_name(TokenLayout layout);
std::vector<std::string> token_layout_names();  // in the order of TokenLayout

struct LayoutShape {
  std::vector<Token> query_types;  // rows of P: the types the last token can have
  std::vector<Token> key_types;    // columns of P: the types among the attended tokens
  int n_special = 0;               // special tokens in the sequence: k = l + n_special
};

LayoutShape layout_shape(TokenLayout layout);

// The literal token sequence of `bits` (each 0 or 1) under the layout; used by the brute-force
// checks, which evaluate the model token by token.
std::vector<Token> layout_tokens(TokenLayout layout, const std::vector<int>& bits);

}  // namespace lenlab
