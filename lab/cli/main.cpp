#include <cstdio>
#include <iostream>

#include "core/progress.hpp"
#include "lab/cli/cli.hpp"

int main(int argc, char** argv) {
  return lenlab::lenlab_main(argc, argv, std::cout, std::cerr,
                             lenlab::Progress::stream_is_tty(stderr));
}
