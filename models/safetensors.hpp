#pragma once
// Checkpoints in the safetensors format, so other tools (Python's safetensors, PyTorch, NumPy) can
// read lenlab's weights without a lenlab-specific parser. Layout: an 8-byte little-endian header
// length N, N bytes of JSON (padded with spaces to a multiple of 8) mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} plus an optional "__metadata__" object of
// strings, then the raw little-endian tensor bytes (offsets relative to the end of the header).
// lenlab reads and writes F32 and F64 (a --precision float64 run's weights).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lenlab {

struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;  // row-major; [] is a scalar
  std::vector<double> data;    // the values (every F32 value is a double exactly)
  std::string dtype = "F32";   // as stored: "F32" (saving rounds data to float) or "F64"
};

struct SafeTensors {
  std::vector<NamedTensor> tensors;  // saved in this order; loaded in file (data offset) order
  std::map<std::string, std::string> metadata;

  // Throws UsageError naming the missing tensor and listing the tensors present.
  const NamedTensor& at(const std::string& name) const;
};

// Atomic (write_file_atomic). Throws UsageError for an empty, duplicate or reserved name, a
// negative dimension, or a shape whose product differs from data.size().
void save_safetensors(const std::filesystem::path& path, const SafeTensors& st);

// Every malformation (short file, header length past the end, bad JSON, a dtype other than F32 or
// F64, offsets out of range, overlapping, leaving gaps or not matching the shape) is a UsageError
// naming the file and the problem.
SafeTensors load_safetensors(const std::filesystem::path& path);

}  // namespace lenlab
