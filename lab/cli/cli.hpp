#pragma once
// The `lenlab` command line. In a library so tests can run it in-process.
#include <iosfwd>

namespace lenlab {

// Parses argv and runs the subcommand. Usage errors print one line `lenlab: error: ...` to err
// and return 2; a diverged run returns 3; success 0. Help and progress go to out / err.
int lenlab_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                bool err_is_tty = false);

}  // namespace lenlab
