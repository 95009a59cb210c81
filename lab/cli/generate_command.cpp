#include "lab/cli/generate_command.hpp"

#include <CLI/CLI.hpp>

#include "lab/cli/cli_options.hpp"
#include "lab/cli/run_flags.hpp"

namespace lenlab {

GenerateCommand::GenerateCommand(CLI::App& app) {
  CLI::App& cmd = *app.add_subcommand(
      "generate",
      "Write with a trained token-task or text run after a prompt, token by token from a "
      "key-value cache, printing each token as it comes");
  command_ = &cmd;
  GenerateOptions& o = options_;
  cmd.add_option("run", o.run_dir, "A trained run's folder (lenlab train's --out)")->required();
  cmd.add_option("--prompt", o.prompt,
                 "What the model reads first: a text run's characters, or a token task's symbols "
                 "separated by spaces (numbers 0..n-1, BOS, SEP, FILL, MARK); BOS is added");
  cmd.add_option("--prompt-file", o.prompt_file, "The prompt, from a file (instead of --prompt)");
  add_setting(cmd, "--tokens", o.tokens, "Tokens to write after the prompt")
      ->check(int_range(1, kMaxGenerateTokens));
  add_setting(cmd, "--sample-temperature", o.sampling.temperature,
              "0: greedy (each token the most likely); > 0: each drawn from the model's "
              "distribution at this temperature (--temperature is attention's)");
  add_setting(cmd, "--top-k", o.sampling.top_k,
              "Sampling: draw among the k most likely tokens only (0: all)");
  add_setting(cmd, "--top-p", o.sampling.top_p,
              "Sampling: draw among the most likely tokens whose probability reaches p (1: all)");
  add_setting(cmd, "--seed", o.seed, "Sampling: the seed of the draws");
  add_setting(cmd, "--threads", o.threads, "CPU threads (default: the run's)")
      ->check(int_range(1, thread_limit(), " (4 per core of this machine)"));
  add_test_time_options(cmd, o.attention, /*measurements=*/false);
  add_device_option(cmd, o.device);
  add_budget_options(cmd, o.budget);
  cmd.footer(
      "Examples:\n  lenlab generate runs/text-rope --prompt 'And God said' --tokens 200\n"
      "  lenlab generate runs/copy --prompt '3 1 4 1 SEP' --tokens 4");
}

int GenerateCommand::run(const CommandLine& line) {
  options_.out = &line.out;
  options_.log = &line.err;
  return run_generate(options_);
}

}  // namespace lenlab
