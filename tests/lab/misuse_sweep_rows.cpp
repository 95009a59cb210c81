// The misuse table's rows for lenlab run, theory and serve, and the config files they read
// (tests/lab/misuse_table.hpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/lab/misuse_table.hpp"

namespace lenlab::test {

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

std::string misuse_config_text(const std::string& name) {
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
  if (name == "init-from-absent")
    return good +
           "[figures.b]\ninit_from = \"/nonexistent/lenlab-run\"\nvary = \"pe\"\n"
           "values = [\"rope\"]\n";
  if (name == "nan-setting")
    return good + "[figures.b]\nlr = nan\nvary = \"pe\"\nvalues = [\"rope\"]\n";
  // A compared figure (a baseline), for --seeds-until-decided and the key seeds_until_decided.
  const std::string compared = good + "baseline = \"nope\"\n";
  if (name == "compared") return compared;
  if (name == "until-decided-zero") return "seeds_until_decided = 0\n" + compared;
  if (name == "until-decided-text") return "seeds_until_decided = \"many\"\n" + compared;
  if (name == "until-decided-below")
    return "seeds = [1, 2, 3]\nseeds_until_decided = 2\n" +
           compared.substr(compared.find('\n') + 1);
  FAIL("no config named " << name);
  return "";
}

std::vector<Misuse> sweep_misuses() {
  return {
      // ---- experiments
      {{"reproduce", "--figures", "1z", "--out", "{out}"}, 2, "1z"},
      {{"reproduce", "--seeds", "0", "--out", "{out}"}, 2, "--seeds"},
      // A config that is not a regular file: a named pipe is refused at once, never waited on.
      {{"run", "{fifo:config.toml}", "--out", "{out}"}, 2, "a named pipe (FIFO)"},
      {{"run", "/dev/zero", "--out", "{out}"}, 2, "a character device"},
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
      {{"run", "{config:huge-expression}", "--out", "{out}"}, 2, "--reparam is 900000 bytes long"},
      {{"run", "{config:int-too-large}", "--out", "{out}"},
       2,
       "'batch_size' must be an integer from -2147483648 to 2147483647"},
      {{"run", "{config:nan-setting}", "--out", "{out}"}, 2, "'lr' must be a finite number"},
      // --seeds-until-decided MAX and the config's seeds_until_decided.
      {{"run", "{config:compared}", "--seeds-until-decided", "0", "--out", "{out}"},
       2,
       "--seeds-until-decided"},
      {{"run", "{config:compared}", "--seeds-until-decided", "-2", "--out", "{out}"},
       2,
       "--seeds-until-decided"},
      {{"run", "{config:compared}", "--seeds-until-decided", "many", "--out", "{out}"},
       2,
       "--seeds-until-decided"},
      {{"run", "{config:compared}", "--seeds-until-decided", "1.5", "--out", "{out}"},
       2,
       "--seeds-until-decided"},
      {{"run", "{config:compared}", "--seeds-until-decided", "1001", "--out", "{out}"},
       2,
       "--seeds-until-decided"},
      {{"run", "{config:compared}", "--seeds-until-decided", "", "--out", "{out}"},
       2,
       "--seeds-until-decided: '' is not a decimal integer"},
      {{"run", "{config:compared}", "--seeds", "3", "--seeds-until-decided", "2", "--out", "{out}"},
       2,
       "--seeds-until-decided 2 is below the 3 seeds figure 'a' already runs"},
      {{"run", "{config:compared}", "--seeds-until-decided", "3", "--dry-run", "--seeds", "4"},
       2,
       "--seeds-until-decided 3 is below the 4 seeds"},
      {{"run", "{config:good}", "--seeds-until-decided", "5", "--out", "{out}"},
       2,
       "no selected figure has a baseline"},
      {{"run", "{config:compared}", "--seeds-until-decided", "5", "--emit-slurm", "{dir}", "--out",
        "{out}"},
       2,
       "--emit-slurm trains a fixed plan"},
      {{"run", "{config:compared}", "--seeds-until-decided", "5", "--run-index", "0", "--out",
        "{out}"},
       2,
       "--run-index trains a fixed plan"},
      {{"run", "{config:until-decided-zero}", "--out", "{out}"},
       2,
       "'seeds_until_decided' must be an integer from 1 to 1000"},
      {{"run", "{config:until-decided-text}", "--out", "{out}"},
       2,
       "'seeds_until_decided' must be an integer"},
      {{"run", "{config:until-decided-below}", "--out", "{out}"},
       2,
       "seeds_until_decided = 2 is below the 3 seeds figure 'a' already runs"},
      {{"plot", "{dir}"}, 2, "not an experiment folder"},
      // Found by a probe (hostile input, third pass): an empty config ran the built-in paper one,
      // an empty --figures or --emit-slurm trained everything, an --emit-slurm that cannot be a
      // folder left config.toml in --out, a config's init_from error named no config, a failing
      // gnuplot was found after the report's files were written.
      {{"run", "", "--dry-run"}, 2, "config '': an empty argument"},  // (not the 87 runs)
      {{"run", "{config:good}", "--figures", "", "--out", "{out}"}, 2, "--figures ''"},
      {{"run", "{config:good}", "--figures", ",", "--out", "{out}"}, 2, "--figures ',': no figure"},
      {{"run", "{config:good}", "--emit-slurm", "", "--out", "{out}"}, 2, "--emit-slurm ''"},
      {{"run", "{config:good}", "--emit-slurm", "/dev/null", "--out", "{out}"},
       2,
       "--emit-slurm: cannot create directory /dev/null"},
      {{"run", "{config:good}", "--out", "/dev/null"}, 2, "--out: cannot create directory"},
      {{"run", "{config:init-from-absent}", "--out", "{out}"},
       2,
       "init-from-absent.toml: --init-from /nonexistent/lenlab-run: no such folder"},
      {{"representation", "{dir}", "--gnuplot", "/bin/false", "--out", "{out}"},
       2,
       "point --gnuplot at one that works"},
      {{"theory", "--tokens", "xyz"}, 2, "--tokens: unknown token layout 'xyz'"},
      {{"theory", "--task", "lenght"}, 2, "--task: unknown task 'lenght'"},
      {{"theory", "--reparam-shift", "nan"}, 2, "--reparam-shift must be finite"},
      {{"theory", "--runs", ""}, 2, "--runs ''"},
      // ---- theory
      {{"theory", "--task", "lenght"}, 2, "lenght"},
      {{"theory", "--pe", "rope"}, 2, "--runs"},
      {{"theory", "--runs", "{dir}", "--pe", "rotary"}, 2, "rotary"},
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
      // A classroom's codes and limit (lab/serve/classroom.hpp).
      {{"serve", "--join-code", "AB", "--port", "0", "--out", "{out}"}, 2, "--join-code 'AB'"},
      {{"serve", "--teacher-code", "no spaces!", "--port", "0", "--out", "{out}"},
       2,
       "--teacher-code"},
      {{"serve", "--join-code", "same1", "--teacher-code", "SAME1", "--port", "0", "--out",
        "{out}"},
       2,
       "the teacher's must differ"},
      {{"serve", "--runs-per-student", "0", "--out", "{out}"}, 2, "--runs-per-student"},
      {{"serve", "--host", "256.1.1.1", "--port", "0", "--out", "{out}"}, 2, "256.1.1.1"},
      {{"serve", "--corpus", "shakespeare", "--port", "0", "--out", "{out}"}, 2, "NAME=FILE"},
      {{"serve", "--corpus", "s=/nonexistent/lenlab.txt", "--port", "0", "--out", "{out}"},
       2,
       "/nonexistent/lenlab.txt"},
      {{"serve", "--allow-host", "http://lab.example.org", "--port", "0", "--out", "{out}"},
       2,
       "--allow-host"},
      {{"serve", "--allow-origin", "lab.example.org", "--port", "0", "--out", "{out}"},
       2,
       "--allow-origin"},
      {{"serve", "--colour", "red"}, 2, "--colour"},
  };
}

}  // namespace lenlab::test
