#pragma once
// A model as a safetensors file: every parameter under its GPT-2-style name (see
// models/parameters.hpp), float32, plus the run's settings in the metadata, so the same weights
// can be loaded elsewhere (e.g. Python's safetensors) and compared.
#include <filesystem>
#include <map>
#include <string>

#include "models/transformer.hpp"

namespace lenlab {

void save_checkpoint(const std::filesystem::path& path, const Transformer<float>& model,
                     const std::map<std::string, std::string>& metadata);

// Fills `model`'s parameters from `path`; every tensor must be present with the model's shape
// (a UsageError names the first mismatch).
void load_checkpoint(const std::filesystem::path& path, Transformer<float>& model);

}  // namespace lenlab
