#pragma once
// A model as a safetensors file: every parameter under its GPT-2-style name (see
// models/parameters.hpp), float32 (float64 for a float64 run), plus the run's settings in the
// metadata, so the same weights can be loaded elsewhere (e.g. Python's safetensors) and compared.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "models/config.hpp"

namespace lenlab {

// params [parameter_count(config)]: one model's flat parameter buffer, on the host, saved in its
// own precision (float: F32, double: F64).
template <class T>
void save_checkpoint(const std::filesystem::path& path, const ModelConfig& config, const T* params,
                     const std::map<std::string, std::string>& metadata);

// One model's flat parameter buffer [parameter_count(config)] from `path`, as stored (F32 values
// are doubles exactly); every tensor must be present with the config's shape (a UsageError names
// the first mismatch).
std::vector<double> load_checkpoint(const std::filesystem::path& path, const ModelConfig& config);
// The same into params [parameter_count(config)] of T (float rounds F64 values).
template <class T>
void load_checkpoint(const std::filesystem::path& path, const ModelConfig& config, T* params);

}  // namespace lenlab
