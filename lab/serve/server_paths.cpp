#include "lab/serve/server_paths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "core/error.hpp"
#include "tasks/text_corpus.hpp"

namespace lenlab {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

bool build_has_default_corpus() {
  try {
    corpus_path("");
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

std::vector<std::string> names_of(const std::map<std::string, std::string>& corpora) {
  std::vector<std::string> names;
  for (const auto& [name, file] : corpora) names.push_back(name);
  return names;
}

// A client's value in a message: short, and a string quoted.
std::string shown(const Json& value) {
  std::string s = value.is_string() ? "'" + value.get<std::string>() + "'"
                                    : value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 80) + "…" : s;
}

// "3", 3 or "run:3" → 3; 0 when the value has none of these forms.
int run_number(const Json& value) {
  constexpr long long kMostRuns = 999999999;  // nine digits, as the API's /api/runs/N
  if (value.is_number_integer()) {
    const long long n = value.get<long long>();
    return n >= 1 && n <= kMostRuns ? static_cast<int>(n) : 0;
  }
  if (!value.is_string()) return 0;
  std::string s = value.get<std::string>();
  if (s.rfind("run:", 0) == 0) s = s.substr(4);
  if (s.empty() || s.size() > 9 ||
      !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return 0;
  return std::stoi(s);
}

}  // namespace

std::map<std::string, std::string> offered_corpora(const std::vector<std::string>& flags) {
  std::map<std::string, std::string> corpora;
  const bool has_default = build_has_default_corpus();
  if (has_default) corpora[kDefaultCorpusName] = "";
  for (const std::string& flag : flags) {
    const size_t eq = flag.find('=');
    const std::string name = eq == std::string::npos ? "" : flag.substr(0, eq);
    const std::string file = eq == std::string::npos ? "" : flag.substr(eq + 1);
    const bool good_name =
        !name.empty() && name.size() <= 32 && std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
        });
    if (!good_name || file.empty())
      throw UsageError(fmt::format(
          "--corpus '{}' is not NAME=FILE: NAME is what students choose (1-32 letters, digits, "
          "'_' or '-'), FILE a text file on this machine, e.g. --corpus shakespeare=texts/s.txt",
          flag));
    if (corpora.count(name))
      throw UsageError(fmt::format(
          "--corpus {}: the name '{}' is offered already ({}); give each corpus its own name", flag,
          name,
          has_default && name == kDefaultCorpusName ? "it is the build's default corpus"
                                                    : "by an earlier --corpus"));
    std::error_code ec;
    const bool regular = fs::is_regular_file(file, ec);
    if (!regular || !std::ifstream(file))
      throw UsageError(fmt::format("--corpus {}: '{}' is not a readable regular file", flag, file));
    corpora[name] = file;
  }
  return corpora;
}

ServerPaths page_server_paths(std::map<std::string, std::string> corpora,
                              std::function<FinishedRun(int number)> find,
                              std::function<int()> runs) {
  ServerPaths rules;
  rules["corpus"] = [corpora = std::move(corpora)](const Json& value) -> ServerPath {
    if (value.is_string()) {
      const std::string name = value.get<std::string>();
      if (const auto it = corpora.find(name); it != corpora.end())
        return {it->second, "corpus '" + name + "'"};
    }
    if (corpora.empty())
      throw UsageError(fmt::format(
          "corpus {}: this server offers no corpus (the teacher offers one with lenlab serve "
          "--corpus NAME=FILE); the live page takes a corpus by name, never a path",
          shown(value)));
    throw UsageError(fmt::format(
        "corpus {} is not a corpus this server offers: choose {} (the live page takes a corpus "
        "by name, never a path)",
        shown(value), join_choices(names_of(corpora))));
  };
  rules["init_from"] = [find = std::move(find), runs = std::move(runs)](const Json& value) {
    const int number = run_number(value);
    if (number == 0)
      throw UsageError(fmt::format(
          "init_from {}: give the number of a finished run of this server, e.g. 3 or \"run:3\" "
          "(the live page takes a run by number, never a folder)",
          shown(value)));
    const FinishedRun run = find(number);
    if (run.state.empty())
      throw UsageError(fmt::format("init_from {}: there is no run {} (this server has {})",
                                   shown(value), number,
                                   runs() == 0 ? "none yet" : fmt::format("runs 1 to {}", runs())));
    if (run.state != "completed")
      throw UsageError(fmt::format(
          "init_from {}: run {} is {}; fine-tuning starts from a completed run's weights{}",
          shown(value), number, run.state,
          run.state == "diverged" || run.state == "failed" ? "" : ": wait until it has finished"));
    return ServerPath{run.folder.string(), fmt::format("run {}", number)};
  };
  return rules;
}

}  // namespace lenlab
