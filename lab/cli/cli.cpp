#include "lab/cli/cli.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "core/git_revision.hpp"
#include "core/text_rule.hpp"
#include "core/version.hpp"
#include "lab/cli/eval_command.hpp"
#include "lab/cli/experiment_command.hpp"
#include "lab/cli/generate_command.hpp"
#include "lab/cli/report_commands.hpp"
#include "lab/cli/run_flags.hpp"
#include "lab/cli/serve_command.hpp"
#include "lab/cli/theory_command.hpp"
#include "lab/cli/train_command.hpp"
#include "plots/run_program.hpp"

namespace lenlab {

bool Command::parsed() const {
  return command_ && command_->parsed();
}

std::string Command::name() const {
  return command_ ? command_->get_name() : "";
}

int lenlab_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                bool err_is_tty) {
  CLI::App app{
      "lenlab: a laboratory for length generalization in small transformers.\n"
      "Trains decoder-only transformers on synthetic 0/1-sequence tasks at short lengths and tests "
      "them at long ones.",
      "lenlab"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("lenlab {} ({})", version(), git_revision()));

  // Every subcommand, in the order `lenlab --help` lists them.
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(std::make_unique<TrainCommand>(app));
  commands.push_back(std::make_unique<ExperimentCommand>(app, ExperimentCommand::Kind::kReproduce));
  commands.push_back(std::make_unique<ExperimentCommand>(app, ExperimentCommand::Kind::kRun));
  commands.push_back(std::make_unique<EvalCommand>(app));
  commands.push_back(std::make_unique<GenerateCommand>(app));
  commands.push_back(std::make_unique<PlotCommand>(app));
  commands.push_back(std::make_unique<RepresentationCommand>(app));
  commands.push_back(std::make_unique<TheoryCommand>(app));
  commands.push_back(std::make_unique<ServeCommand>(app));

  // CLI11 would say "A subcommand is required" for a misspelt one: name it and list the commands.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* c : app.get_subcommands({})) names.push_back(c->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      err << "lenlab: error: "
          << error_line(fmt::format("unknown command {}; valid commands: {} (see lenlab --help)",
                                    shown(argv[1]), join_choices(names)))
          << "\n";
      return kExitUsage;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    std::string sub;
    for (const auto& c : commands)
      if (c->parsed()) sub = c->name() + " ";
    err << "lenlab: error: " << error_line(e.what()) << " (see lenlab " << sub << "--help)\n";
    return kExitUsage;
  }

  // This program, for a SLURM script: argv[0] as a path, or found on PATH the way the shell found
  // it (a bare "lenlab" made absolute would name the current folder); failing both, "lenlab".
  const std::optional<std::filesystem::path> program =
      find_program(argc > 0 && argv[0] ? argv[0] : "");
  CommandLine line{out, err, err_is_tty, "", program ? program->string() : "lenlab"};
  for (int i = 0; i < argc; ++i) line.text += (i ? " " : "") + std::string(argv[i]);
  try {
    for (const auto& c : commands)
      if (c->parsed()) {
        refuse_empty_values(*app.get_subcommand(c->name()));
        return c->run(line);
      }
    return kExitUsage;  // unreachable: app.require_subcommand(1)
  } catch (const UsageError& e) {
    err << "lenlab: error: " << error_line(e.what()) << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {  // e.g. cuda::CudaError: the input was fine, the machine not
    err << "lenlab: error: " << error_line(e.what()) << "\n";
    return kExitFailure;
  }
}

}  // namespace lenlab
