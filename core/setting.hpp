#pragma once
// A setting declared once: its key (config files, manifests, run ids, the JSON of the Python module
// and of the live page), its help, its command-line flag, the range a flag accepts, and how run
// ids treat it. A struct of settings lists its rows in one visit function (train/run_settings.hpp:
// visit_spec_fields), and everything that reads or writes settings walks those rows: the CLI's
// flags (lab/cli/), config files and manifests (train/run_settings_json.cpp), the Python keywords
// and the page's fields. A new setting is its field and its row; nothing else lists it.
#include <algorithm>
#include <limits>
#include <string>

namespace lenlab {

struct Setting {
  // Traits, or-ed together.
  enum : unsigned {
    // In every run's id and manifest, even at its default: the settings of the first published
    // runs. Every other setting is left out while at its default, so that adding one keeps every
    // earlier run's id (train/run_settings_json.cpp).
    kInEveryId = 1u << 0,
    kTestTime = 1u << 1,     // how a trained model is evaluated (lenlab eval takes it too)
    kSwitch = 1u << 2,       // an integer 0/1 given as a flag without a value (--attention-stats)
    kInternal = 1u << 3,     // set by the lab, not by a user: no flag (init_parent)
    kNoFlag = 1u << 4,       // a config key only (init_from is the flag of its own command)
    kMeasureOnly = 1u << 5,  // a test-time measurement that changes no result (attention_stats)
    kWindow = 1u << 6,  // resolved into the attention window, which records it in tokens (n_local)
    // Names a file or folder on the machine that runs it (corpus, init_from): the live page never
    // takes such a value as a path, only as a name the server offers (lab/serve/server_paths.hpp).
    kServerPath = 1u << 7,
  };
  static constexpr long long kNoMin = std::numeric_limits<long long>::min();

  const char* key;
  // The flag's help; "{}" in it is replaced by choices() (a list that only the program knows).
  const char* help = "";
  unsigned traits = 0;
  long long min = kNoMin;          // integers: the smallest value the flag accepts
  const char* flag = nullptr;      // when not "--" + key with '-' for '_' ("--batch": batch_size)
  const char* encoding = nullptr;  // a setting of this positional encoding only ("t5")
  std::string (*choices)() = nullptr;
  const char* label = nullptr;  // the live page's words for it; null: the key in words
  // In every run's id and manifest that meets one of these conditions, even at its default:
  // "KEY" (that setting is off its default) or "KEY=VALUE" (that setting is VALUE),
  // comma-separated. For a setting added after runs whose absence meant another value
  // (temperature_scope: those runs' temperatures divided q·k alone; yarn's bounds: those runs' yarn
  // was the paper's ramp), so that no new run shares an earlier run's id
  // (train/run_settings_json.cpp); reading such a manifest back gives the value it ran
  // (results/run_record.cpp).
  const char* in_id_when = nullptr;

  bool has(unsigned t) const { return (traits & t) != 0; }
  // "--l-train" for l_train.
  std::string flag_name() const {
    if (flag) return flag;
    std::string f = std::string("--") + key;
    std::replace(f.begin(), f.end(), '_', '-');
    return f;
  }
  std::string help_text() const {
    std::string h = help;
    if (const size_t at = h.find("{}"); at != std::string::npos && choices)
      h.replace(at, 2, choices());
    return h;
  }
};

}  // namespace lenlab
