// A main() for the normal test suite: feeds every file of the given folders (or the given files)
// to a fuzz target's LLVMFuzzerTestOneInput once, in name order, without libFuzzer, so the seed
// corpus and every fixed finding kept in it are checked by every build (gcc, and ASan/UBSan under
// the debug preset). Fails when a folder holds no input, so a wrong path cannot pass silently.
//
//   fuzz_config_replay fuzz/corpus/config
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  size_t total = 0;
  for (int a = 1; a < argc; ++a) {
    const fs::path root = argv[a];
    std::vector<fs::path> files;
    std::error_code ec;
    if (fs::is_directory(root, ec)) {
      for (const fs::directory_entry& e : fs::directory_iterator(root, ec))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(root, ec)) {
      files.push_back(root);
    }
    if (files.empty()) {
      std::fprintf(stderr, "%s: no inputs in '%s'\n", argv[0], root.c_str());
      return 1;
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::ifstream in(file, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof()) {
        std::fprintf(stderr, "%s: cannot read '%s'\n", argv[0], file.c_str());
        return 1;
      }
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++total;
    }
    std::printf("replayed %zu inputs from %s\n", files.size(), root.c_str());
  }
  std::printf("replayed %zu inputs in all, none failed\n", total);
  return 0;
}
