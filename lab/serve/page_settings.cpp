#include "lab/serve/page_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/error.hpp"
#include "core/json_input.hpp"
#include "cost/admission.hpp"
#include "lab/run/init_from.hpp"
#include "models/config.hpp"
#include "reparam/reparam.hpp"
#include "tasks/task.hpp"

namespace lenlab {

using Json = nlohmann::ordered_json;

TrainSpec page_base_spec() {
  TrainSpec s;
  s.l_train = 10;
  s.l_test = 40;
  s.steps = 500;
  s.optimizer.warmup_steps = 50;
  s.eval_samples = 200;
  return s;
}

Json page_options(int max_running, const std::vector<std::string>& corpora) {
  Json defaults = Json::object();
  TrainSpec base = page_base_spec();
  Json labels = Json::object();
  visit_spec_fields(base, [&](const Setting& row, const auto& field) {
    defaults[row.key] = field;
    if (row.label) labels[row.key] = row.label;
  });
  // Each method and the settings that turn it on, at values that make a first try meaningful
  // (docs/methods.md explains them); the page sends only the chosen method's settings.
  const Json methods = Json::array({
      {{"name", "none"}, {"label", "none"}, {"settings", Json::object()}},
      {{"name", "vcl"},
       {"label", "virtual-context learning (token tasks)"},
       {"settings", {{"vcl_offset", 1}, {"vcl_alpha", 0.0}}}},
      {{"name", "random_positions"},
       {"label", "randomized positions"},
       {"settings", {{"random_positions", 128}}}},
      {{"name", "misalign"},
       {"label", "misalignment regularizer (markov)"},
       {"settings", {{"misalign_alpha", 0.1}, {"misalign_kind", "kl"}}}},
      {{"name", "lambda_mask"},
       {"label", "Λ-mask (LM-Infinite)"},
       {"settings", {{"n_local", "train"}, {"n_global", 1}}}},
      {{"name", "distance_cap"},
       {"label", "distance cap (relative encodings)"},
       {"settings", {{"distance_cap", "train"}}}},
      {{"name", "temperature"},
       {"label", "attention temperature"},
       {"settings", {{"temperature", "auto-pmax"}}}},
  });
  // The encodings the page can train as they are: not one that needs a setting of its own
  // (bias: an expression the page has no field for).
  std::vector<std::string> pes;
  for (const PositionalEncodingInfo& info : positional_encodings())
    if (!info.needs_setting) pes.push_back(info.name);
  return {{"tasks", task_names()},
          {"pes", pes},
          {"reparams", Reparam::builtin_names()},
          {"defaults", defaults},
          {"labels", labels},
          {"methods", methods},
          {"corpora", corpora},
          {"max_running", max_running}};
}

namespace {

// The first thing `lenlab train` would refuse in these settings (over the page's base), if any.
std::optional<std::string> problem_with(const Json& settings, const Budget& budget, bool gpu) {
  try {
    const TrainSpec spec = with_parent_id(spec_from_json(settings, page_base_spec(), "settings"));
    admit_run(spec, budget, {.gpu = gpu});
    return std::nullopt;
  } catch (const UsageError& e) {
    return std::string(e.what());
  }
}

// A setting's flag: l_test → --l-test, batch_size → --batch.
std::string flag_of(const std::string& key) {
  const TrainSpec defaults;
  std::string flag;
  visit_spec_fields(defaults, [&](const Setting& row, const auto&) {
    if (key == row.key) flag = row.flag_name();
  });
  return flag.empty() ? "--" + key : flag;
}

// Where `flag` stands whole in `message` from `from` on ("--l-test", not the start of
// "--l-test-x"); npos if nowhere.
size_t find_flag(const std::string& message, const std::string& flag, size_t from = 0) {
  for (size_t at = message.find(flag, from); at != std::string::npos;
       at = message.find(flag, at + 1)) {
    const size_t end = at + flag.size();
    const char next = end < message.size() ? message[end] : ' ';
    if (!std::isalnum(static_cast<unsigned char>(next)) && next != '-') return at;
  }
  return std::string::npos;
}

// Whether a message names the setting: as its flag ("--l-test (6) must …"), as a value's owner
// ("reparam 'log' is …") or quoted ("unknown setting 'colour'").
bool names_setting(const std::string& message, const std::string& key) {
  return find_flag(message, flag_of(key)) != std::string::npos ||
         message.find(key + " '") != std::string::npos ||
         message.find("'" + key + "'") != std::string::npos;
}

// The message in the page's words: each setting's flag (--reparam-shift) as the field's name
// (reparam_shift), so that a student is told about the field they can change.
std::string in_page_words(std::string message) {
  const TrainSpec defaults;
  visit_spec_fields(defaults, [&](const Setting& row, const auto&) {
    const std::string flag = row.flag_name(), key = row.key;
    for (size_t at = find_flag(message, flag); at != std::string::npos;
         at = find_flag(message, flag, at + 1))
      message.replace(at, flag.size(), key);
  });
  return message;
}

// check_page_settings with the CLI's messages.
PageSettings check_in_cli_words(const Json& request, const Budget& budget, bool gpu) {
  PageSettings out;
  if (!request.is_object()) {
    out.errors.push_back(
        {"", "expected a JSON object of settings, e.g. {\"task\": \"length\", \"l_train\": 10}"});
    return out;
  }
  // Unknown keys and wrong types belong to their field whatever the rest says.
  for (const auto& item : request.items()) {
    try {
      spec_from_json(Json{{item.key(), item.value()}}, page_base_spec(), "settings");
    } catch (const UsageError& e) {
      out.errors.push_back({item.key(), e.what()});
    }
  }
  // Runs share the machine (RunQueue trains --max-running at once, one thread each; Eigen's thread
  // count is process-wide): a run may not ask for more.
  if (request.contains("threads") && request["threads"] != 1)
    out.errors.push_back({"threads",
                          "threads: the live page trains each run on one thread (lenlab serve "
                          "--max-running sets how many run at once); leave it at 1"});
  if (!out.errors.empty()) return out;
  // Each round blames the fields whose return to the default changes the first thing refused
  // (fixes it, or gets past it), then sets them aside and looks again: a wrong combination (task
  // mean with reparam log) is on each of its fields, separate mistakes each on their own.
  Json rest = request;
  for (std::optional<std::string> first = problem_with(rest, budget, gpu); first;
       first = problem_with(rest, budget, gpu)) {
    std::vector<std::string> blamed, named;
    for (const auto& item : rest.items()) {
      Json without = rest;
      without.erase(item.key());
      if (problem_with(without, budget, gpu) != first) blamed.push_back(item.key());
    }
    // A field whose default brings another error first (l_train's 10 over l_test 6) changes the
    // message too: of those blamed, the ones the message names, when it names any.
    for (const std::string& key : blamed)
      if (names_setting(*first, key)) named.push_back(key);
    if (!named.empty()) blamed = named;
    if (blamed.empty()) {  // no single field to blame
      out.errors.push_back({"", *first});
      return out;
    }
    for (const std::string& key : blamed) {
      out.errors.push_back({key, *first});
      rest.erase(key);
    }
  }
  if (out.errors.empty())
    out.spec = with_parent_id(spec_from_json(request, page_base_spec(), "settings"));
  return out;
}

// The request with each kServerPath setting resolved by its rule (a name or run number → the
// path), and the words to say instead of each path; the refusals go in `errors`.
Json resolve_server_paths(const Json& request, const ServerPaths& paths,
                          std::vector<FieldError>& errors,
                          std::vector<std::pair<std::string, std::string>>& shown) {
  if (!request.is_object()) return request;
  Json out = request;
  const TrainSpec fields;
  visit_spec_fields(fields, [&](const Setting& row, const auto&) {
    if (!row.has(Setting::kServerPath) || !request.contains(row.key)) return;
    if (request[row.key] == "") return;  // the default (GET /api/options lists it): no path
    const auto rule = paths.find(row.key);
    if (rule == paths.end()) {
      errors.push_back({row.key, fmt::format("{} names a file or folder on the server, which the "
                                             "live page does not take; leave it out",
                                             row.key)});
      return;
    }
    try {
      const ServerPath path = rule->second(request[row.key]);
      out[row.key] = path.path;
      if (!path.path.empty()) shown.emplace_back(path.path, path.shown);
    } catch (const UsageError& e) {
      errors.push_back({row.key, e.what()});
    }
  });
  return out;
}

}  // namespace

PageSettings check_page_settings(const Json& request, const Budget& budget, bool gpu,
                                 const ServerPaths& paths) {
  PageSettings out;
  std::vector<std::pair<std::string, std::string>> shown;  // a path → what the client sent
  const Json resolved = resolve_server_paths(request, paths, out.errors, shown);
  if (!out.errors.empty()) return out;
  out = check_in_cli_words(resolved, budget, gpu);
  for (FieldError& e : out.errors) {
    e.message = in_page_words(e.message);
    // A path the server chose is not the client's to see: said as they named it ("run 3"). The
    // words start with what the path is ("corpus 'bible'"): a message that says so before the
    // path ("corpus PATH is empty") keeps it once.
    for (const auto& [path, words] : shown) {
      const std::string kind = words.substr(0, words.find(' ') + 1);
      for (size_t at = e.message.find(path); at != std::string::npos;
           at = e.message.find(path, at)) {
        size_t from = at;
        if (!kind.empty() && at >= kind.size() &&
            e.message.compare(at - kind.size(), kind.size(), kind) == 0)
          from = at - kind.size();
        e.message.replace(from, at + path.size() - from, words);
        at = from + words.size();
      }
    }
  }
  return out;
}

Json parse_page_request(std::string_view body) {
  // Settings are flat: a deeper value is refused as it is parsed.
  Json request = parse_json_input<Json>(body, "the settings", kFlatJsonDepth);
  size_t settings = 0;
  const TrainSpec fields;
  visit_spec_fields(fields, [&](const Setting&, const auto&) { ++settings; });
  if (request.is_object() && request.size() > settings)
    throw UsageError(
        fmt::format("the request has {} settings; a run has {} (GET /api/options lists them)",
                    request.size(), settings));
  return request;
}

Json errors_json(const std::vector<FieldError>& errors) {
  Json list = Json::array();
  for (const FieldError& e : errors)
    list.push_back(
        {{"field", e.field.empty() ? Json(nullptr) : Json(e.field)}, {"message", e.message}});
  return {{"errors", list}};
}

}  // namespace lenlab
