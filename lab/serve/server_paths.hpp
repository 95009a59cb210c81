#pragma once
// Settings that name a file or folder on the server (rows with Setting::kServerPath: corpus,
// init_from) are never taken from the page as paths: a client names what the teacher offers
// instead, and the server turns that into the path. Anything else is refused on the field, with
// the forms it takes, and never says whether some path exists.
//   corpus     a NAME among the corpora offered: `lenlab serve --corpus NAME=FILE` (repeatable),
//              and "kjv" for the build's default corpus when the build has one
//   init_from  a finished run of this server by number: 3 or "run:3" (completed: a run still
//              queued or training, diverged or failed is refused)
// "" is the default of both (as if left out), and is no path. The page's checker
// (lab/serve/page_settings.hpp) goes by the trait: a kServerPath row with no rule here is refused
// whatever its value.
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace lenlab {

// A client's value turned into the path the run reads, and the words messages say instead of that
// path ("run 3").
struct ServerPath {
  std::string path;
  std::string shown;
};
// Resolves a client's value (UsageError, its message the field's error, when refused).
using ServerPathRule = std::function<ServerPath(const nlohmann::ordered_json& value)>;
using ServerPaths = std::map<std::string, ServerPathRule>;  // by setting key

// The name the build's default corpus is offered under (when it has one).
inline constexpr const char* kDefaultCorpusName = "kjv";

// Offered corpora, name → file ("" for the build's default): each `--corpus NAME=FILE` checked
// (NAME 1-32 letters, digits, '_' or '-', given once, not kDefaultCorpusName when the build has a
// default; FILE a readable regular file), plus the default. UsageError naming the bad value.
std::map<std::string, std::string> offered_corpora(const std::vector<std::string>& flags);

// A run of this server as init_from sees it: its state ("" when there is no such run) and, when
// completed, its folder.
struct FinishedRun {
  std::string state;
  std::filesystem::path folder;
};

// The rules of the live page: corpora by name, init_from by the number of a run `find` knows;
// `runs`: how many runs the server has (for the message).
ServerPaths page_server_paths(std::map<std::string, std::string> corpora,
                              std::function<FinishedRun(int number)> find,
                              std::function<int()> runs);

}  // namespace lenlab
