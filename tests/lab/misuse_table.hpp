#pragma once
// The misuse table's rows (tests/lab/test_misuse.cpp runs them): a row is a command line, the exit
// status it must end with (2: bad input, 1: the machine failed) and a word its one-line error must
// contain.
#include <string>
#include <vector>

namespace lenlab::test {

struct Misuse {
  std::vector<std::string> args;  // "{out}": a folder that does not exist yet; "{dir}": an empty
                                  // one; "{config:NAME}": a config file below (kConfigs);
                                  // "{fifo:NAME}": a named pipe in {dir}, no writer on it;
                                  // "{parent}": a completed tiny run (one for every row);
                                  // "{edited:KEY=JSON}": a copy of it in {dir}, its manifest's
                                  // setting KEY changed to JSON
  int rc;
  std::string word;  // the error line must contain it
};

// `lenlab train` with small settings (so that a row which wrongly started work would still end
// quickly), `extra` (flag, value pairs) replacing or adding to them.
std::vector<std::string> tiny_train(const std::vector<std::string>& extra);

// The rows of lenlab train and lenlab eval: commands and flags, every bound of every integer,
// lengths, token tasks, reals, reparameterizations, runaway work.
std::vector<Misuse> run_misuses();
// The rows of lenlab run, theory and serve, and the config files they read ("{config:NAME}").
std::vector<Misuse> sweep_misuses();
std::string misuse_config_text(const std::string& name);

}  // namespace lenlab::test
