// Token layouts of the linear-attention theory: names, shapes and literal sequences.
#include "theory/token_layout.hpp"

#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"

namespace lenlab {
namespace {

struct LayoutEntry {
  TokenLayout layout;
  const char* name;
};

// Order = TokenLayout order = the order error messages list the choices in.
constexpr std::array<LayoutEntry, 4> kLayouts = {{{TokenLayout::kNone, "none"},
                                                  {TokenLayout::kBos, "bos"},
                                                  {TokenLayout::kEos, "eos"},
                                                  {TokenLayout::kBosEos, "bos,eos"}}};

bool has_bos(TokenLayout layout) {
  return layout == TokenLayout::kBos || layout == TokenLayout::kBosEos;
}
bool has_eos(TokenLayout layout) {
  return layout == TokenLayout::kEos || layout == TokenLayout::kBosEos;
}

}  // namespace

TokenLayout parse_token_layout(const std::string& name) {
  for (const auto& entry : kLayouts) {
    if (name == entry.name) return entry.layout;
  }
  throw UsageError(fmt::format("unknown token layout '{}'; valid choices: {}", name,
                               join_choices(token_layout_names())));
}

std::string token_layout_name(TokenLayout layout) {
  for (const auto& entry : kLayouts) {
    if (entry.layout == layout) return entry.name;
  }
  throw std::logic_error("token_layout_name: TokenLayout out of range");
}

std::vector<std::string> token_layout_names() {
  std::vector<std::string> names;
  for (const auto& entry : kLayouts) names.emplace_back(entry.name);
  return names;
}

LayoutShape layout_shape(TokenLayout layout) {
  LayoutShape shape;
  // With EOS the query is always EOS; without it, the last bit.
  shape.query_types = has_eos(layout) ? std::vector<Token>{kEos} : std::vector<Token>{kZero, kOne};
  shape.key_types = {kZero, kOne};
  if (has_bos(layout)) shape.key_types.push_back(kBos);
  if (has_eos(layout)) shape.key_types.push_back(kEos);
  shape.n_special = static_cast<int>(has_bos(layout)) + static_cast<int>(has_eos(layout));
  return shape;
}

std::vector<Token> layout_tokens(TokenLayout layout, const std::vector<int>& bits) {
  std::vector<Token> tokens;
  tokens.reserve(bits.size() + 2);
  if (has_bos(layout)) tokens.push_back(kBos);
  for (const int b : bits) tokens.push_back(b != 0 ? kOne : kZero);
  if (has_eos(layout)) tokens.push_back(kEos);
  return tokens;
}

}  // namespace lenlab
