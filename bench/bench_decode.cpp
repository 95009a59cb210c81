// What a written token costs: on the text configs' model (2 layers, d_model 64, 4 heads, d_ff 256,
// RoPE, 96 symbols), one thread, the tokens per second of decoding from the key-value cache
// (models/model_decode.hpp: one query per layer over the cached keys and values) against
// recomputing the whole prefix for every token (a full inference forward, the last row read), at
// each position of --positions; and the cache with a Λ-mask (1 global + 512 local keys), whose
// cache keeps its first and last keys only. Prints figures; never passes or fails.
//   usage: lenlab_decode_bench [tokens (default 32)] [--positions 256,1024,4096,16384]
//          [--recompute-up-to 4096] [--window-only]
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench_args.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "tasks/batch.hpp"

using namespace lenlab;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Tokens per second decoding `tokens` tokens one at a time after a prefix of `position` tokens.
double cached_rate(Transformer<float>& model, const std::vector<int>& text, int position,
                   int tokens, const AttentionSpec& attention) {
  DecodeCache<CpuBackend<float>> cache = model.begin_decode(1, position + tokens, attention);
  model.decode(cache, {std::vector<int>(text.begin(), text.begin() + position)});
  const auto start = Clock::now();
  for (int i = 0; i < tokens; ++i) model.decode(cache, {{text[position + i]}});
  return tokens / seconds_since(start);
}

// The same by a full inference forward of the whole prefix for every token.
double recompute_rate(Transformer<float>& model, const std::vector<int>& text, int position,
                      int tokens) {
  PackedBatch<CpuBackend<float>> packed;
  const auto start = Clock::now();
  for (int i = 0; i < tokens; ++i) {
    Batch b;
    append_tokens(b, std::vector<int>(text.begin(), text.begin() + position + i + 1));
    b.token.rows = {b.n_tokens() - 1};
    b.token.labels = {0};
    b.token.weights = {1.0};
    packed.pack({&b}, model.config());
    model.infer(packed);
  }
  return tokens / seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  int tokens = 32, recompute_up_to = 4096;
  bool window_only = false;
  std::string positions_text = "256,1024,4096,16384";
  CLI::App app{"Times decoding from the key-value cache against recomputing the prefix."};
  add_steps_argument(app, tokens, "Tokens timed at each position");
  app.add_option("--positions", positions_text, "Prefix lengths to time at, comma-separated");
  add_setting(app, "--recompute-up-to", recompute_up_to,
              "Time the full recompute at positions up to this (it costs the prefix per token)")
      ->check(int_range(0, 1 << 20));
  app.add_flag("--window-only", window_only,
               "Time the Λ-mask's cache only (the whole cache's prefix costs its square)");
  if (const int status = parse_bench_args(app, argc, argv); status >= 0) return status;
  try {
    std::vector<int> positions;
    for (size_t at = 0; at < positions_text.size();) {
      const size_t comma = std::min(positions_text.find(',', at), positions_text.size());
      positions.push_back(std::stoi(positions_text.substr(at, comma - at)));
      if (positions.back() < 1 || positions.back() > (1 << 22))
        throw UsageError(fmt::format("--positions: {} is not in 1..{}", positions.back(), 1 << 22));
      at = comma + 1;
    }
    ModelConfig c;
    c.n_layer = 2;
    c.d_model = 64;
    c.n_head = 4;
    c.d_ff = 256;
    c.pe = PositionalEncoding::kRope;
    c.vocab_size = 96;
    c.scalar_head = false;
    c.token_head = true;
    Transformer<float> model(c);
    model.init(1);
    int longest = 0;
    for (int p : positions) longest = std::max(longest, p);
    Rng rng(2);
    std::vector<int> text(longest + tokens);
    for (int& t : text) t = static_cast<int>(rng.uniform_int(0, c.vocab_size - 1));
    AttentionSpec lambda;
    lambda.window.n_global = 1;
    lambda.window.n_local = 512;
    std::cout << fmt::format(
        "lenlab_decode_bench: {} tokens timed at each position, one thread, model 2 x 64 (RoPE)\n",
        tokens);
    std::cout << fmt::format("{:>10} {:>14} {:>14} {:>14} {:>10}\n", "position", "cache tok/s",
                             "recompute tok/s", "Λ-mask tok/s", "speedup");
    for (const int p : positions) {
      const double cached = window_only ? 0 : cached_rate(model, text, p, tokens, {});
      const double windowed = cached_rate(model, text, p, tokens, lambda);
      const bool recompute = !window_only && p <= recompute_up_to;
      const double full = recompute ? recompute_rate(model, text, p, std::min(tokens, 4)) : 0;
      std::cout << fmt::format("{:>10} {:>14} {:>14} {:>14.0f} {:>10}\n", p,
                               window_only ? "-" : fmt::format("{:.0f}", cached),
                               recompute ? fmt::format("{:.1f}", full) : "-", windowed,
                               recompute ? fmt::format("{:.0f}x", cached / full) : "-");
    }
  } catch (const UsageError& e) {
    std::cerr << "lenlab_decode_bench: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
