#pragma once
// What the live page (`lenlab serve`) offers and how it checks what a student submits: the same
// settings, the same parsing and the same errors as `lenlab train`, each error put beside the
// field it is about.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cost/budget.hpp"
#include "lab/serve/server_paths.hpp"
#include "train/run_settings.hpp"

namespace lenlab {

// The page's starting point: the paper lab's model, trained briefly (a run takes seconds on one
// core), so a class can try many ideas. Every field a student leaves out keeps this value.
TrainSpec page_base_spec();

// GET /api/options: the choices (tasks, positional encodings, built-in reparameterizations, the
// corpora offered by name), every setting's default (page_base_spec), the methods with the
// settings each needs, and how many runs train at once.
nlohmann::ordered_json page_options(int max_running, const std::vector<std::string>& corpora = {});

struct FieldError {
  std::string field;  // a setting key, or "" when no single field is to blame
  std::string message;
};

struct PageSettings {
  TrainSpec spec;                  // valid when errors is empty
  std::vector<FieldError> errors;  // empty: valid
};

// A POST /api/runs body as the flat JSON of settings check_page_settings takes (which refuses a
// non-object). UsageError, its message the 400's: not JSON or not UTF-8 (the message escapes the
// bad bytes), a value that nests (refused as it is parsed: a megabyte of '[' would otherwise be a
// value whose copies recurse a million levels deep), or more keys than there are settings (50 000
// unknown keys once took 6 s and a 49 MB reply).
nlohmann::ordered_json parse_page_request(std::string_view body);

// The 400's body: {"errors": [{"field": KEY or null, "message": TEXT}, ...]}.
nlohmann::ordered_json errors_json(const std::vector<FieldError>& errors);

// A request body (a flat JSON object of settings) checked as `lenlab train` checks its flags:
// parsing (unknown keys, wrong types), resolve() (bad names, ranges, a reparam that does not hold
// at the task's targets) and the budget (work a run may not exceed). Each error goes beside the
// fields whose return to the page's default changes it and that the message names (or all of the
// former when it names none): a wrong combination (task mean with reparam log) beside each of its
// fields, separate mistakes each beside its own. Messages name settings as the page does
// (reparam_shift where the CLI says --reparam-shift). `gpu`: whether runs train on a GPU (the time
// estimate's machine). A setting whose row has Setting::kServerPath is first resolved by its rule
// in `paths` (a name or run number → the path; lab/serve/server_paths.hpp), and refused when
// `paths` has none; a fine-tune's spec comes back with its parent's id (with_parent_id).
PageSettings check_page_settings(const nlohmann::ordered_json& request, const Budget& budget,
                                 bool gpu, const ServerPaths& paths = {});

}  // namespace lenlab
