#pragma once
// A model as a safetensors file: every parameter under its GPT-2-style name (see
// models/parameters.hpp), float32, plus the run's settings in the metadata, so the same weights
// can be loaded elsewhere (e.g. Python's safetensors) and compared.
#include <filesystem>
#include <map>
#include <string>

#include "models/config.hpp"

namespace lenlab {

// params [parameter_count(config)]: one model's flat parameter buffer, on the host.
void save_checkpoint(const std::filesystem::path& path, const ModelConfig& config,
                     const float* params, const std::map<std::string, std::string>& metadata);

// Fills params [parameter_count(config)] from `path`; every tensor must be present with the
// config's shape (a UsageError names the first mismatch).
void load_checkpoint(const std::filesystem::path& path, const ModelConfig& config, float* params);

}  // namespace lenlab
