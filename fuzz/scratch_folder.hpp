#pragma once
// A fuzz target's own folder under the system's temporary directory, made once (mkdtemp: a fresh
// name, so parallel fuzzing jobs never share one) and removed when the process ends.
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace lenlab::fuzz {

struct ScratchFolder {
  std::filesystem::path dir;
  // `target`: the fuzz target's name, in the folder's name and in the message if mkdtemp fails.
  explicit ScratchFolder(const char* target) {
    std::string name =
        (std::filesystem::temp_directory_path() / (std::string("lenlab_") + target + "_XXXXXX"))
            .string();
    if (mkdtemp(name.data()) == nullptr) {
      std::perror((std::string(target) + ": mkdtemp").c_str());
      std::abort();
    }
    dir = name;
  }
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
};

}  // namespace lenlab::fuzz
