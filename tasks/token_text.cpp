#include "tasks/token_text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

#include "core/error.hpp"

namespace lenlab {

namespace {

struct Named {
  const char* name;
  int SpecialTokens::*token;
};
constexpr Named kSpecial[] = {{"BOS", &SpecialTokens::bos},
                              {"SEP", &SpecialTokens::sep},
                              {"FILL", &SpecialTokens::fill},
                              {"MARK", &SpecialTokens::mark}};

}  // namespace

TokenText::TokenText(TaskKind task, const TokenTaskSettings& settings, const TextCorpus* corpus)
    : task_(task),
      n_content_(token_content_symbols(task, settings)),
      special_(special_tokens(task, settings)),
      corpus_(corpus) {
  if (task_reads_corpus(task)) {
    if (!corpus) throw std::logic_error("TokenText: a text run needs its corpus");
    byte_token_.assign(256, -1);
    const std::vector<unsigned char>& bytes = corpus->symbols();
    for (size_t i = 0; i < bytes.size(); ++i) byte_token_[bytes[i]] = static_cast<int>(i);
  }
}

std::vector<int> TokenText::parse(const std::string& text, const std::string& what) const {
  std::vector<int> tokens = {special_.bos};
  if (corpus_) {
    for (size_t i = 0; i < text.size(); ++i) {
      const unsigned char byte = static_cast<unsigned char>(text[i]);
      if (byte_token_[byte] < 0)
        throw UsageError(
            fmt::format("{}'s byte 0x{:02x} at offset {} is not in the run's corpus, whose {} "
                        "characters are its vocabulary",
                        what, byte, i, corpus_->n_symbols()));
      tokens.push_back(byte_token_[byte]);
    }
  } else {
    size_t at = 0;
    while (at < text.size()) {
      const size_t begin = text.find_first_not_of(" \t\r\n", at);
      if (begin == std::string::npos) break;
      const size_t end = std::min(text.find_first_of(" \t\r\n", begin), text.size());
      const std::string word = text.substr(begin, end - begin);
      at = end;
      int token = -1;
      for (const Named& s : kSpecial)
        if (word == s.name && special_.*s.token >= 0) token = special_.*s.token;
      int value = -1;
      const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
      if (token < 0 && ec == std::errc() && ptr == word.data() + word.size() && value >= 0 &&
          value < n_content_)
        token = value;
      if (token < 0)
        throw UsageError(fmt::format(
            "{}'s word '{}' at offset {} is no symbol of task '{}': its symbols are the "
            "numbers 0..{} and {}",
            what, word, begin, task_name(task_), n_content_ - 1,
            special_.sep >= 0 ? "BOS, SEP, FILL, MARK" : "BOS"));
      if (!(tokens.size() == 1 && token == special_.bos)) tokens.push_back(token);  // BOS given
    }
  }
  if (tokens.size() < 2)
    throw UsageError(
        "the prompt is empty: give at least one symbol after BOS (--prompt TEXT or "
        "--prompt-file FILE)");
  return tokens;
}

std::string TokenText::text_of(int token) const {
  if (corpus_)
    return token == special_.bos ? std::string("<BOS>")
                                 : std::string(1, static_cast<char>(corpus_->symbols().at(token)));
  for (const Named& s : kSpecial)
    if (token == special_.*s.token) return std::string(" ") + s.name;
  return fmt::format(" {}", token);
}

}  // namespace lenlab
