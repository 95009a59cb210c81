// Every misuse of `lenlab` as one table: a row is a command line, the exit status it must end with
// (2: bad input, 1: the machine failed), a word its one-line error must contain, and the promise
// that the output folder holds nothing new afterwards. A new flag adds rows. Faults that need a
// setup of their own (a full disk, a killed writer, a figure that varies the seed) and the limits
// of the settings are in test_faults.cpp.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lab/run/device.hpp"
#include "tests/support/cli_support.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;

namespace {

struct Misuse {
  std::vector<std::string> args;  // "{out}": a folder that does not exist yet; "{dir}": an empty
                                  // one; "{config:NAME}": a config file below (kConfigs)
  int rc;
  std::string word;  // the error line must contain it
};

// Small settings so that a row which wrongly started work would still end quickly.
const std::vector<std::string> kTiny = {"--steps",        "5", "--l-train", "3", "--l-test", "5",
                                        "--d-model",      "8", "--n-head",  "2", "--d-ff",   "8",
                                        "--eval-samples", "4"};

// `lenlab train` with kTiny's settings, `extra` (flag, value pairs) replacing or adding to them.
std::vector<std::string> train(const std::vector<std::string>& extra) {
  std::vector<std::string> a = {"train", "--out", "{out}"};
  std::vector<std::string> tiny = kTiny;
  for (size_t i = 0; i + 1 < extra.size(); i += 2) {
    const auto it = std::find(tiny.begin(), tiny.end(), extra[i]);
    if (it != tiny.end()) tiny.erase(it, it + 2);
  }
  a.insert(a.end(), tiny.begin(), tiny.end());
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Config files, by name: one good tiny config and bad variants of it.
const char* kGoodConfig = R"(seeds = [1]
[defaults]
task = "length"
l_train = 3
l_test = 5
steps = 5
d_model = 8
n_head = 2
d_ff = 8
eval_samples = 4
[figures.a]
vary = "pe"
values = ["nope", "alibi"]
)";

std::string config_text(const std::string& name) {
  std::string good = kGoodConfig;
  if (name == "good") return good;
  if (name == "unknown-key") return "colour = 1\n" + good;
  if (name == "threads") return good + "[figures.b]\nvary = \"threads\"\nvalues = [5000]\n";
  if (name == "bad-value") return good + "[figures.b]\nvary = \"pe\"\nvalues = [\"foo\"]\n";
  if (name == "not-toml") return "seeds = [1\n";
  if (name == "huge") return good + "[figures.b]\nvary = \"l_test\"\nvalues = [200000]\n";
  // Found by fuzzing (docs/fuzzing.md): a float seed too large for an integer, and a non-ASCII
  // character where toml++ 3.3.0 reaches __builtin_unreachable().
  if (name == "float-seed") return "seeds = [1e19]\n" + good.substr(good.find('\n') + 1);
  if (name == "non-ascii") return "seeds = [1, \xc3\xa9]\n" + good.substr(good.find('\n') + 1);
  if (name == "non-ascii-after-quote")  // the quote opens no string: toml++ reads on past it
    return "seeds = [9'9\xc7\xa4]\n" + good.substr(good.find('\n') + 1);
  if (name == "non-ascii-after-backslash")
    return good +
           "[figures.b]\ntitle = \"\"\"\\\n\xc2\xa7\"\"\"\nvary = \"pe\"\nvalues = [\"rope\"]\n";
  // Found by a probe (hostile input): a header of 50 000 dotted parts overflowed toml++'s stack;
  // figure names that are paths failed only when the figure was written, after training; a NUL
  // in an expression trained as the text before it; a 10 MB title kept gnuplot busy for minutes;
  // a value past an int was "not an integer"; and TOML's nan reached a setting.
  if (name == "deep-header") {
    std::string key = "a";
    for (int i = 0; i < 50000; ++i) key += ".a";
    return good + "[" + key + "]\n";
  }
  if (name == "path-name")
    return good + "[figures.\"../../escape\"]\nvary = \"pe\"\nvalues = [\"rope\"]\n";
  if (name == "slash-name") return good + "[figures.\"a/b\"]\nvary = \"pe\"\nvalues = [\"rope\"]\n";
  if (name == "nul-expression")
    return good +
           "[figures.b]\nreparam = \"x\\u0000garbage((\"\nvary = \"pe\"\nvalues = [\"rope\"]\n";
  if (name == "huge-title")
    return good + "[figures.b]\ntitle = \"" + std::string(1 << 20, 'T') +
           "\"\nvary = \"pe\"\nvalues = [\"rope\"]\n";
  if (name == "huge-expression")  // its error must not echo 900 KB
    return good + "[figures.b]\nreparam = \"" + std::string(900000, 'x') +
           "\"\nvary = \"pe\"\nvalues = [\"rope\"]\n";
  if (name == "int-too-large")
    return good.replace(good.find("[defaults]\n"), 11, "[defaults]\nbatch_size = 1000000000000\n");
  if (name == "nan-setting")
    return good + "[figures.b]\nlr = nan\nvary = \"pe\"\nvalues = [\"rope\"]\n";
  FAIL("no config named " << name);
  return "";
}

const std::vector<Misuse>& table() {
  static const std::vector<Misuse> rows = [] {
    std::vector<Misuse> r = {
        // ---- commands and flags
        {{"fly"}, 2, "unknown command 'fly'"},
        {{"train", "--stpes", "5", "--out", "{out}"}, 2, "--stpes"},
        {{"train"}, 2, "--out"},
        {train({"--task", "lenght"}), 2, "lenght"},
        {train({"--pe", "sinusoid"}), 2, "sinusoid"},
        {train({"--device", "tpu"}), 2, "tpu"},
        // ---- integers: every bound of every flag
        {train({"--l-train", "0"}), 2, "--l-train"},
        {train({"--l-train", "-1"}), 2, "--l-train"},
        {train({"--l-train", "1000001", "--l-test", "1000001"}), 2, "--l-train"},
        {train({"--l-test", "2"}), 2, "--l-test"},
        {train({"--l-test", "1000001"}), 2, "--l-test"},
        {train({"--steps", "0"}), 2, "--steps"},
        {train({"--steps", "-5"}), 2, "--steps"},
        {train({"--steps", "1e3"}), 2, "--steps"},
        {train({"--steps", "2147483648"}), 2, "--steps"},
        {train({"--batch", "0"}), 2, "--batch"},
        {train({"--batch", "1000001"}), 2, "--batch"},
        {train({"--seed", "-1"}), 2, "--seed"},
        {train({"--eval-seed", "-1"}), 2, "--eval-seed"},
        {train({"--n-layer", "0"}), 2, "--n-layer"},
        {train({"--n-layer", "1025"}), 2, "--n-layer"},
        {train({"--d-model", "0"}), 2, "--d-model"},
        {train({"--d-model", "65537"}), 2, "--d-model"},
        {train({"--n-head", "0"}), 2, "--n-head"},
        {train({"--n-head", "3"}), 2, "--n-head"},
        {train({"--n-head", "16"}), 2, "--n-head"},
        {train({"--d-ff", "0"}), 2, "--d-ff"},
        {train({"--d-ff", "65537"}), 2, "--d-ff"},
        {train({"--warmup", "-1"}), 2, "--warmup"},
        {train({"--eval-samples", "0"}), 2, "--eval-samples"},
        {train({"--eval-samples", "1000001"}), 2, "--eval-samples"},
        {train({"--threads", "0"}), 2, "--threads"},
        {train({"--threads", "5000"}), 2, "--threads"},
        // ---- test lengths
        {train({"--lengths", ""}), 2, "--lengths"},
        {train({"--lengths", "0..5"}), 2, "--lengths"},
        {train({"--lengths", "5..3"}), 2, "ends below"},
        {train({"--lengths", "1,,3"}), 2, "empty item"},
        {train({"--lengths", "1..9:0"}), 2, "step"},
        {train({"--lengths", "1.5"}), 2, "whole number"},
        {train({"--lengths", "1000001"}), 2, "--lengths"},
        {train({"--lengths", "1..1000000", "--l-test", "1000000"}), 2, "more than 100000"},
        {train({"--lengths", "1000..1000000:1000", "--l-test", "1000000", "--eval-samples", "500"}),
         2, "--max-time"},
        {train({"--lengths", "1..9", "--l-test", "5"}), 2, "--l-test"},
        // ---- token tasks: settings and task/length combinations with no meaning
        {train({"--task", "passkey", "--key-length", "0"}), 2, "--key-length"},
        {train({"--task", "passkey", "--key-length", "5"}), 2, "needs length >= 6"},
        {train({"--task", "passkey", "--lengths", "2..5"}), 2, "--lengths 2..5"},
        {train({"--task", "recall", "--n-symbols", "4"}), 2, "too small"},
        {train({"--task", "copy", "--n-symbols", "1"}), 2, "--n-symbols"},
        {train({"--task", "copy", "--n-symbols", "4097"}), 2, "--n-symbols"},
        {train({"--task", "cycle-navigation", "--modulus", "1"}), 2,
         "--modulus (modulus) must be in 2..4096"},
        {train({"--task", "solve-equation", "--modulus", "4097"}), 2, "--modulus (modulus)"},
        {train({"--task", "solve-equation", "--lengths", "2..5"}), 2,
         "task 'solve-equation' needs length >= 3 (the shortest equation is x = v), got 2"},
        {train({"--task", "markov", "--markov-order", "0"}), 2, "--markov-order"},
        {train({"--task", "text", "--corpus", "/nonexistent/corpus.txt"}), 2,
         "cannot read corpus /nonexistent/corpus.txt"},
        {train({"--task", "text", "--corpus", "/proc/self"}), 2, "a directory"},
        {train({"--task", "markov", "--markov-order", "5"}), 2, "65536"},
        {train({"--task", "markov", "--markov-concentration", "0"}), 2, "--markov-concentration"},
        {train({"--task", "markov", "--markov-concentration", "nan"}), 2, "--markov-concentration"},
        {train({"--markov-seed", "-1"}), 2, "--markov-seed"},
        {train({"--task", "passkey", "--depths", "1.5"}), 2, "outside [0, 1]"},
        {train({"--task", "passkey", "--depths", "-0.5"}), 2, "outside [0, 1]"},
        {train({"--task", "passkey", "--depths", "nan"}), 2, "not a number"},
        {train({"--task", "passkey", "--depths", "0,,1"}), 2, "empty item"},
        {train({"--depths", ""}), 2, "--depths"},
        {train({"--task", "copy", "--reparam", "sqrt"}), 2, "--reparam"},
        {train({"--task", "copy", "--l-test", "50000", "--eval-samples", "500"}), 2, "--max-time"},
        {train({"--task", "parity", "--reparam-shift", "1"}), 2, "--reparam-shift"},
        // ---- lenlab eval (a trained run's rows: tests/train/test_eval.cpp)
        {{"eval", "{dir}", "--depths", "2", "--out", "{out}"}, 2, "--depths"},
        {{"eval", "{dir}", "--out", "{out}"}, 2, "holds no run"},
        {{"eval", "{dir}/absent", "--out", "{out}"}, 2, "absent"},
        {{"eval", "{dir}", "--samples", "0", "--out", "{out}"}, 2, "--samples"},
        {{"eval", "{dir}", "--lengths", "x", "--out", "{out}"}, 2, "--lengths"},
        {{"eval", "{dir}", "--eval-seed", "-1", "--out", "{out}"}, 2, "--eval-seed"},
        {{"eval", "{dir}", "--threads", "0", "--out", "{out}"}, 2, "--threads"},
        {{"eval", "{dir}", "--representation-stats", "--representation-projections", "0", "--out",
          "{out}"},
         2,
         "--representation-projections"},
        {{"eval", "{dir}", "--representation-projections", "8", "--out", "{out}"},
         2,
         "--representation-stats"},
        {{"eval", "{dir}", "--device", "tpu", "--out", "{out}"}, 2, "tpu"},
        {{"representation", "{dir}", "--out", "{out}"}, 2, "holds no evaluation"},
        {{"representation", "{dir}/absent", "--out", "{out}"}, 2, "absent"},
        {{"representation", "{dir}"}, 2, "--out"},
        {{"eval", "{dir}"}, 2, "--out"},
        {{"eval", "{dir}", "--n-local", "", "--out", "{out}"}, 2, "--n-local ''"},
        {{"eval", "{dir}", "--distance-cap", "", "--out", "{out}"}, 2, "--distance-cap ''"},
        {{"eval", "{dir}", "--n-global", "x", "--out", "{out}"}, 2, "--n-global"},
        {{"eval", "{dir}", "--temperature", "hot", "--out", "{out}"}, 2, "--temperature"},
        {{"eval", "{dir}", "--temperature", "auto-entropy", "--temperature-step", "0", "--out",
          "{out}"},
         2,
         "--temperature-step must be a finite number > 0"},
        // ---- reals
        {train({"--lr", "0"}), 2, "--lr"},
        {train({"--beta1", "1"}), 2, "--beta1"},
        {train({"--beta2", "-0.5"}), 2, "--beta2"},
        {train({"--adam-eps", "0"}), 2, "--adam-eps"},
        {train({"--lr", "nan"}), 2, "--lr"},
        {train({"--lr", "inf"}), 2, "--lr"},
        {train({"--min-lr-ratio", "2"}), 2, "--min-lr-ratio"},
        {train({"--weight-decay", "-1"}), 2, "--weight-decay"},
        {train({"--clip", "nan"}), 2, "--clip"},
        {train({"--precision", "float16"}), 2, "float16"},
        {train({"--precision", "float64", "--device", "cuda"}), 2, "float32"},
        // The comparison files (tools/torch_reference): unwritable, a folder, one file twice, or
        // a file the run itself writes.
        {train({"--save-init", "/proc/lenlab/init.safetensors"}), 2, "--save-init"},
        {train({"--save-batches", "/proc/lenlab/batches.jsonl"}), 2, "--save-batches"},
        {train({"--save-init", "{dir}"}), 2, "not a folder"},
        {train({"--save-init", "{dir}/a", "--save-batches", "{dir}/a"}), 2, "same file"},
        {train({"--save-batches", "{out}/loss.csv"}), 2, "the run's own loss.csv"},
        {train({"--reparam-shift", "nan"}), 2, "--reparam-shift"},
        // ---- reparameterizations
        {train({"--reparam", "bogus("}), 2, "bogus("},
        {train({"--task", "sum", "--reparam", "log"}), 2, "--reparam-shift"},  // log(0)
        {train({"--reparam", "x*1e-300"}), 2, "float"},
        {train({"--reparam", "x*1e40"}), 2, "float"},
        {train({"--reparam", "1e-9*x+1"}), 2, "same float"},
        {train({"--reparam", "1/x", "--reparam-inverse", "1/x + 0.1*sin(_pi/x)"}), 2,
         "--reparam-inverse"},
        {train({"--reparam", "identity", "--reparam-inverse", "x"}), 2, "--reparam-inverse"},
        // ---- runaway work: refused on its estimate, before anything is written
        {train({"--l-test", "100000", "--eval-samples", "500"}), 2, "--max-time"},
        {train({"--steps", "2147483647"}), 2, "--steps"},
        {train({"--d-model", "65536", "--n-head", "1", "--d-ff", "65536", "--n-layer", "64"}), 2,
         "memory"},
        {train({"--batch", "1000000", "--l-train", "1000", "--l-test", "1000"}), 2, "memory"},
        {train({"--vcl-offset", "-1", "--task", "markov"}), 2, "--vcl-offset"},
        {train({"--vcl-offset", "2"}), 2, "one output per sequence"},
        {train({"--vcl-offset", "20", "--task", "markov"}), 2, "leaves no token with loss"},
        {train({"--vcl-offset", "1", "--vcl-alpha", "2", "--task", "markov"}), 2, "--vcl-alpha"},
        {train({"--vcl-alpha", "0.5", "--task", "markov"}), 2, "without --vcl-offset"},
        {train({"--vcl-prefix", "detach", "--task", "markov"}), 2, "needs --vcl-offset"},
        {train({"--vcl-prefix", "random", "--vcl-offset", "2"}), 2, "--vcl-prefix random"},
        {train({"--vcl-prefix", "drop", "--vcl-offset", "2", "--task", "markov"}), 2, "'drop'"},
        {train({"--init-from", "{dir}/absent"}), 2, "no such folder"},
        {train({"--init-from", "{dir}"}), 2, "holds no run"},
        {train({"--misalign-alpha", "-1", "--task", "markov"}), 2, "--misalign-alpha"},
        {train({"--misalign-alpha", "0.1"}), 2, "task 'markov' only, not 'length'"},
        {train({"--misalign-alpha", "0.1", "--task", "copy"}), 2, "no longer a prompt"},
        {train({"--misalign-extra", "0:0.25", "--task", "markov"}), 2,
         "no effect without --misalign-alpha"},
        {train({"--misalign-alpha", "0.1", "--misalign-extra", "0.5", "--task", "markov"}), 2,
         "--misalign-extra (misalign_extra) must be LO:HI"},
        {train({"--misalign-alpha", "0.1", "--misalign-extra", "0:0.01", "--task", "markov"}), 2,
         "leaves no overlap row"},
        {train({"--misalign-alpha", "0.1", "--misalign-kind", "js", "--task", "markov"}), 2,
         "--misalign-kind (misalign_kind) must be one of 'sce' or 'kl'"},
        {train({"--misalign-kind", "kl", "--task", "markov"}), 2,
         "--misalign-kind kl has no effect without --misalign-alpha"},
        {train({"--misalign-control", "2", "--task", "markov"}), 2,
         "--misalign-control (misalign_control) must be 0 or 1"},
        {train({"--misalign-control", "1", "--misalign-alpha", "0.1", "--task", "markov"}), 2,
         "--misalign-alpha (misalign_alpha) is 0.1: give one or the other"},
        {train({"--misalign-control", "1"}), 2,
         "--misalign-control 1: the misalignment regularizer applies to task 'markov' only"},
        {train({"--random-positions", "-1", "--pe", "rope"}), 2, "--random-positions"},
        {train({"--random-positions", "64"}), 2, "NoPE has no positions"},
        {train({"--random-positions", "4", "--pe", "learned"}), 2, "give at least 7"},
        {train({"--distance-cap", "train"}), 2, "no positions, so no distances to cap"},
        {train({"--distance-cap", "0", "--pe", "rope"}), 2, "--distance-cap must be 'train'"},
        {train({"--distance-cap", ""}), 2, "--distance-cap ''"},
        {train({"--n-local", "0"}), 2, "--n-local must be 'train'"},
        // The encodings' settings (models/positional_encodings.hpp): each with its encoding only,
        // and in range.
        {train({"--pe", "sinusoid"}), 2,
         "'nope', 'learned', 'alibi', 'rope', 't5', 'kerple', 'fire' or 'bias'"},
        {train({"--pe-bias", "-d"}), 2, "--pe-bias '-d' is the bias of --pe bias"},
        {train({"--pe", "bias"}), 2, "--pe bias needs --pe-bias EXPR"},
        {train({"--pe", "bias", "--pe-bias", "-log(d)"}), 2, "distance d = 0, head h = 0"},
        {train({"--pe", "bias", "--pe-bias", "-y*d"}), 2, "Unexpected token \"y\""},
        {train({"--pe", "bias", "--pe-bias", "-h"}), 2, "does not use the variable d"},
        {train({"--t5-buckets", "16"}), 2, "--t5-buckets 16 applies to --pe t5 only"},
        {train({"--pe", "t5", "--t5-buckets", "1"}), 2, "--t5-buckets: must be an integer from 2"},
        {train({"--pe", "t5", "--t5-buckets", "40", "--t5-max-distance", "20"}), 2,
         "--t5-max-distance must be > --t5-buckets / 2 = 20"},
        {train({"--t5-max-distance", "64", "--pe", "rope"}), 2,
         "--t5-max-distance 64 applies to --pe t5 only"},
        {train({"--pe", "t5", "--t5-per-layer", "2"}), 2, "--t5-per-layer must be 0"},
        {train({"--t5-per-layer", "1"}), 2, "--t5-per-layer 1 applies to --pe t5 only"},
        {train({"--rope-base", "500"}), 2, "--rope-base 500 applies to --pe rope only"},
        {train({"--pe", "rope", "--rope-base", "1"}), 2, "--rope-base must be a finite number > 1"},
        {train({"--pe", "rope", "--rope-base", "nan"}), 2, "--rope-base"},
        // Training lengths
        {train({"--l-train-min", "4"}), 2,
         "--l-train-min must be from 1 (the shortest sequence of task 'length') to --l-train 3"},
        {train({"--task", "binary-addition", "--l-train-min", "2"}), 2,
         "--l-train-min must be from 3 (the shortest sequence of task 'binary-addition': two "
         "numbers of one bit and the operator between them)"},
        {train({"--l-train-min", "-1"}), 2, "--l-train-min"},
        {train({"--task", "passkey", "--key-length", "2", "--l-train", "6", "--l-test", "8",
                "--l-train-min", "2"}),
         2,
         "--l-train-min must be from 3 (the shortest sequence of task 'passkey': its key of "
         "--key-length symbols and one more)"},
        {train({"--task", "markov", "--misalign-alpha", "0.1", "--l-train-min", "2"}), 2,
         "the misalignment regularizer's views are --l-train 3 symbols each"},
        // RoPE's context extensions in training
        {train({"--train-rope-scaling", "pi"}), 2,
         "--train-rope-scaling pi applies to --pe rope only"},
        {train({"--pe", "alibi", "--train-rope-factor", "2"}), 2,
         "--train-rope-factor 2 applies to --pe rope only"},
        {train({"--pe", "rope", "--train-rope-factor", "2"}), 2,
         "--train-rope-factor 2 sets --train-rope-scaling, which is not given"},
        {train({"--pe", "rope", "--train-rope-scaling", "dynamic-ntk"}), 2,
         "dynamic-ntk would change nothing in training"},
        {train({"--pe", "rope", "--train-rope-scaling", "linear"}), 2,
         "unknown rope scaling 'linear'; valid choices"},
        {train({"--pe", "rope", "--train-rope-scaling", "pi", "--train-rope-factor", "0"}), 2,
         "--train-rope-factor must be a finite number > 0"},
        {train({"--pe", "rope", "--train-rope-scaling", "ntk", "--train-rope-factor", "nan"}), 2,
         "--train-rope-factor must be a finite number > 0"},
        {train({"--pe", "rope", "--train-rope-scaling", "pi", "--train-rope-factor", "2",
                "--rope-scaling", "ntk"}),
         2, "a second extension on top of it is not supported"},
        // FIRE's settings
        {train({"--fire-width", "8"}), 2, "--fire-width 8 applies to --pe fire only"},
        {train({"--pe", "alibi", "--fire-threshold", "12"}), 2,
         "--fire-threshold 12 applies to --pe fire only"},
        {train({"--pe", "fire", "--fire-width", "0"}), 2, "--fire-width"},
        {train({"--pe", "fire", "--fire-width", "5000"}), 2,
         "--fire-width must be an integer from 1 to 4096"},
        {train({"--pe", "fire", "--fire-threshold", "0.5"}), 2,
         "--fire-threshold must be 'train' (the training window: 5 tokens for this run)"},
        {train({"--pe", "fire", "--fire-threshold", "abc"}), 2, "got 'abc'"},
        // RoPE's context extensions at test time
        {train({"--rope-scaling", "pi"}), 2, "which rotates nothing"},
        {train({"--pe", "alibi", "--rope-scaling", "yarn"}), 2, "encoding is alibi"},
        {train({"--pe", "rope", "--rope-scaling", "linear"}), 2,
         "unknown rope scaling 'linear'; valid choices: 'none', 'pi'"},
        {train({"--pe", "rope", "--rope-scaling", "pi", "--rope-factor", "0"}), 2,
         "--rope-factor must be a finite number > 0"},
        {train({"--pe", "rope", "--rope-scaling", "ntk", "--rope-factor", "-2"}), 2, "got '-2'"},
        {train({"--pe", "rope", "--rope-scaling", "ntk", "--rope-factor", "nan"}), 2, "got 'nan'"},
        {train({"--pe", "rope", "--rope-factor", "2"}), 2, "--rope-scaling, which is not given"},
        {train({"--pe", "rope", "--rope-scaling", "yarn", "--yarn-alpha", "40"}), 2,
         "yarn's ramp needs 0 < alpha < beta, got alpha 40 and beta 32"},
        {train({"--pe", "rope", "--rope-scaling", "yarn", "--yarn-beta", "inf"}), 2,
         "yarn's ramp needs 0 < alpha < beta"},
        {train({"--yarn-alpha", "0.5"}), 2, "--rope-scaling, which is not given"},
        {train({"--n-global", "-1", "--n-local", "train"}), 2, "--n-global must be >= 0"},
        {train({"--n-global", "2"}), 2, "no effect without --n-local"},
        {train({"--temperature", "0"}), 2, "--temperature must be a number from 0.001 to 1000"},
        // found by a probe: 1/T overflowed the logits, every results row inf and NaN, exit 0
        {train({"--temperature", "1e-300"}), 2, "--temperature must be a number from 0.001"},
        {train({"--temperature", "1e300"}), 2, "--temperature must be a number from 0.001"},
        {train({"--temperature", "auto"}), 2, "auto-pmax or auto-entropy"},
        {train({"--temperature", "auto-pmax", "--temperature-min", "0"}), 2,
         "--temperature-min must be from 0.001 to 1"},
        {train({"--temperature", "auto-pmax", "--temperature-min", "1.5"}), 2,
         "--temperature-min must be from 0.001 to 1"},
        {train({"--temperature", "auto-pmax", "--temperature-min", "1e-300", "--temperature-step",
                "1"}),
         2, "--temperature-min must be from 0.001 to 1"},
        {train({"--temperature", "auto-pmax", "--temperature-step", "0"}), 2,
         "--temperature-step must be a finite number > 0"},
        {train({"--temperature", "auto-pmax", "--temperature-step", "-0.1"}), 2,
         "--temperature-step must be a finite number > 0"},
        {train({"--temperature", "auto-pmax", "--temperature-min", "0.001", "--temperature-step",
                "0.0001"}),
         2, "grid of more than 1000 temperatures"},
        {train({"--temperature-min", "0.3"}), 2, "which only an auto temperature has"},
        {{"train", "--out", "{out}", "--steps", "5", "--l-train", "4", "--lengths", "1..3"},
         2,
         "--lengths '1..3' ends at 3, below --l-train 4"},
        {train({"--reparam", "x\ty"}), 2, "--reparam holds a control character (at offset 1)"},
        {train({"--pe", "bias", "--pe-bias", "\xff-d"}), 2, "--pe-bias is not valid UTF-8"},
        {train({"--max-memory", "1M"}), 2, "--max-memory"},
        {train({"--max-memory", "lots"}), 2, "--max-memory"},
        {train({"--max-memory", "-4G"}), 2, "--max-memory"},
        {train({"--max-time", "1ms"}), 2, "--max-time"},
        {train({"--max-time", "soon"}), 2, "--max-time"},
        {train({"--steps", "100000", "--max-time", "1s"}), 2, "--max-time"},
        // ---- experiments
        {{"reproduce", "--figures", "1z", "--out", "{out}"}, 2, "1z"},
        {{"reproduce", "--seeds", "0", "--out", "{out}"}, 2, "--seeds"},
        {{"run", "{config:good}", "--seeds", "-1", "--out", "{out}"}, 2, "--seeds"},
        {{"run", "{config:good}", "--seeds", "2000000000", "--out", "{out}"}, 2, "seeds"},
        {{"run", "{config:good}", "--jobs", "0", "--out", "{out}"}, 2, "--jobs"},
        {{"run", "{config:good}", "--jobs", "5000", "--out", "{out}"}, 2, "--jobs"},
        {{"run", "{config:good}", "--run-index", "-1", "--out", "{out}"}, 2, "--run-index"},
        {{"run", "{config:good}", "--run-index", "2", "--out", "{out}"}, 2, "--run-index"},
        {{"run", "{config:good}", "--device", "tpu", "--out", "{out}"}, 2, "tpu"},
        {{"run", "{config:good}", "--dry-run", "--emit-slurm", "{dir}"}, 2, "--dry-run"},
        {{"run", "{config:good}", "--dry-run", "--run-index", "0"}, 2, "--run-index"},
        {{"run", "{config:good}", "--dry-run", "--slurm"}, 2, "--dry-run"},
        {{"run", "{config:good}", "--slurm", "--run-index", "0", "--out", "{out}"}, 2, "--slurm"},
        {{"run", "{config:good}", "--slurm", "--emit-slurm", "{dir}", "--out", "{out}"},
         2,
         "--emit-slurm"},
        {{"run", "{config:good}", "--sbatch-arg", "--partition=gpu", "--out", "{out}"},
         2,
         "--sbatch-arg is for --slurm"},
        {{"run", "{config:good}", "--slurm", "--slurm-poll", "nan", "--out", "{out}"},
         2,
         "--slurm-poll must be a number of seconds from 0.1 to 3600, got nan"},
        {{"run", "{config:good}", "--slurm", "--slurm-poll", "0", "--out", "{out}"},
         2,
         "--slurm-poll"},
        {{"run", "{config:good}", "--jobs", "2"}, 2, "--out is required"},
        {{"run", "{config:good}", "--max-time", "1ms", "--out", "{out}"}, 2, "--max-time"},
        {{"run", "{config:good}", "--gnuplot", "/bin/false", "--out", "{out}"}, 2, "gnuplot"},
        {{"run", "{config:unknown-key}", "--out", "{out}"}, 2, "colour"},
        {{"run", "{config:threads}", "--out", "{out}"}, 2, "--threads"},
        {{"run", "{config:bad-value}", "--out", "{out}"}, 2, "foo"},
        {{"run", "{config:not-toml}", "--out", "{out}"}, 2, "not-toml.toml"},
        // Refused before any training: on a CPU by the sweep's cheap first look
        // (cost/preflight.hpp,
        // "for its evaluations alone, more than --max-time"), before any run's resolve(); on a GPU,
        // whose evaluations alone fit 24 h, by the sweep's whole estimate (an H200: "would take
        // about 47h26m ... more than --max-time 24h; most of it is evaluation").
        {{"run", "{config:huge}", "--out", "{out}"}, 2, "more than --max-time"},
        {{"run", "{config:float-seed}", "--out", "{out}"}, 2, "'seeds'"},
        {{"run", "{config:non-ascii}", "--out", "{out}"}, 2, "non-ASCII"},
        {{"run", "{config:non-ascii-after-quote}", "--out", "{out}"}, 2, "non-ASCII"},
        {{"run", "{config:non-ascii-after-backslash}", "--out", "{out}"}, 2, "backslash"},
        {{"run", "{dir}/absent.toml", "--out", "{out}"}, 2, "absent.toml"},
        {{"run", "{config:deep-header}", "--out", "{out}"}, 2, "nested more than 64 tables deep"},
        {{"run", "{config:path-name}", "--out", "{out}"}, 2, "path separator '/'"},
        {{"run", "{config:slash-name}", "--out", "{out}"}, 2, "the figure name holds a path"},
        {{"run", "{config:nul-expression}", "--out", "{out}"},
         2,
         "--reparam holds a control character (at offset 1)"},
        {{"run", "{config:huge-title}", "--out", "{out}"}, 2, "the title is 1048576 bytes long"},
        {{"run", "{config:huge-expression}", "--out", "{out}"},
         2,
         "--reparam is 900000 bytes long"},
        {{"run", "{config:int-too-large}", "--out", "{out}"},
         2,
         "'batch_size' must be an integer from -2147483648 to 2147483647"},
        {{"run", "{config:nan-setting}", "--out", "{out}"}, 2, "'lr' must be a finite number"},
        {{"plot", "{dir}"}, 2, "not an experiment folder"},
        // ---- theory
        {{"theory", "--task", "lenght"}, 2, "lenght"},
        {{"theory", "--pe", "rope"}, 2, "--runs"},
        {{"theory", "--runs", "{dir}", "--pe", "sinusoid"}, 2, "sinusoid"},
        {{"theory", "--runs", "{dir}"}, 2, "no completed run"},
        {{"theory", "--runs", "{dir}/absent"}, 2, "absent"},
        // ---- serve (each refused before it listens: none may start serving)
        {{"serve", "--port", "70000", "--out", "{out}"}, 2, "--port"},
        {{"serve", "--port", "-1", "--out", "{out}"}, 2, "--port"},
        {{"serve", "--max-running", "0", "--out", "{out}"}, 2, "--max-running"},
        {{"serve", "--max-queued", "0", "--out", "{out}"}, 2, "--max-queued"},
        {{"serve", "--device", "gpu", "--out", "{out}"}, 2, "gpu"},
        {{"serve", "--max-time", "soon", "--out", "{out}"}, 2, "--max-time"},
        {{"serve", "--max-memory", "lots", "--out", "{out}"}, 2, "--max-memory"},
        {{"serve", "--host", "256.1.1.1", "--port", "0", "--out", "{out}"}, 2, "256.1.1.1"},
        {{"serve", "--colour", "red"}, 2, "--colour"},
    };
    if (!Device::choose("auto").gpu())
      r.push_back({train({"--device", "cuda"}), 2, "--device cuda"});
    return r;
  }();
  return rows;
}

// The row's arguments with its folders and configs filled in.
std::vector<std::string> fill(const Misuse& row, const fs::path& out, const fs::path& dir) {
  std::vector<std::string> args;
  for (std::string a : row.args) {
    if (a.rfind("{out}", 0) == 0) a = out.string() + a.substr(5);
    if (a.rfind("{dir}", 0) == 0) a = dir.string() + a.substr(5);
    if (a.rfind("{config:", 0) == 0) {
      const std::string name = a.substr(8, a.size() - 9);
      const fs::path file = dir / (name + ".toml");
      std::ofstream(file) << config_text(name);
      a = file.string();
    }
    args.push_back(a);
  }
  return args;
}

std::string joined(const std::vector<std::string>& args) {
  std::string s = "lenlab";
  for (const std::string& a : args) s += " " + a;
  return s;
}

}  // namespace

TEST_CASE("every misuse in the table: its exit status, one error line with its word, nothing new") {
  const fs::path base = run_dir("misuse");
  for (size_t i = 0; i < table().size(); ++i) {
    const Misuse& row = table()[i];
    const fs::path out = base / fmt::format("out{}", i), dir = base / fmt::format("dir{}", i);
    fs::create_directories(dir);
    const std::vector<std::string> args = fill(row, out, dir);
    const auto before = snapshot(dir);
    const CliResult r = run_cli(args);
    INFO(joined(args) << "\n  stderr: " << r.err);
    CHECK(r.rc == row.rc);
    CHECK(r.err.rfind("lenlab: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(contains(r.err, row.word));
    CHECK(!fs::exists(out));         // nothing written, not even the folder
    CHECK(snapshot(dir) == before);  // and nothing new beside the inputs
  }
}

TEST_CASE("every flag of train, run and eval is in the table at least once") {
  // The flags `lenlab train --help` and `lenlab run --help` list.
  std::vector<std::string> flags;
  for (const char* cmd : {"train", "run", "eval"}) {
    const CliResult help = run_cli({cmd, "--help"});
    for (const std::string& l : split(help.out, '\n'))
      if (l.rfind("  --", 0) == 0) flags.push_back(l.substr(2, l.find(' ', 2) - 2));
  }
  REQUIRE(flags.size() > 20);
  // Flags without a wrong value: a switch, and paths whose misuse other rows cover.
  const std::vector<std::string> no_wrong_value = {
      "--help",        "--overwrite",       "--out",
      "--figures",     "--emit-slurm",      "--reparam-inverse",
      "--predictions", "--attention-stats", "--representation-stats"};
  for (const std::string& flag : flags) {
    if (std::find(no_wrong_value.begin(), no_wrong_value.end(), flag) != no_wrong_value.end())
      continue;
    bool found = false;
    for (const Misuse& row : table())
      found = found || std::find(row.args.begin(), row.args.end(), flag) != row.args.end();
    CHECK_MESSAGE(found, flag << " has no row in the misuse table");
  }
}
