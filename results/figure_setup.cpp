#include "results/figure_setup.hpp"

#include <fmt/format.h>

#include <cctype>

namespace lenlab {

using Json = nlohmann::ordered_json;

namespace {

// The reparameterization as the readable part of a run's folder name: alphanumerics, '_' for the
// rest, cut to 48 characters. The hash at the end of the id tells runs apart; a whole expression
// (up to 1000 bytes) made a name past the file system's 255 bytes, and the sweep failed on it.
std::string readable_part(const std::string& s) {
  constexpr size_t kMaxChars = 48;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kMaxChars; ++i)
    out += std::isalnum(static_cast<unsigned char>(s[i])) ? s[i] : '_';
  return out;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace

std::vector<uint64_t> FigureSpec::line_seeds(size_t line,
                                             const std::vector<uint64_t>& seeds) const {
  if (is_pooled(line)) {
    const auto [f, l] = pooled_lines.at(line - values.size());
    return pooled[f].line_seeds(l, seeds);
  }
  if (vary == "seed") return {line_spec(line, 0).seed};
  return this->seeds.empty() ? seeds : this->seeds;
}

TrainSpec FigureSpec::line_spec(size_t line, uint64_t seed) const {
  if (is_pooled(line)) {
    const auto [f, l] = pooled_lines.at(line - values.size());
    return pooled[f].line_spec(l, seed);
  }
  Json j = Json::object();
  if (vary == kVarySettings) {
    j = values.at(line);
    j.erase("label");
  } else {
    j[vary] = values.at(line);
  }
  TrainSpec spec = spec_from_json(j, base, "figure " + name);
  if (vary != "seed") spec.seed = seed;  // else the line's own value is its seed
  return spec;
}

size_t SettingGrid::size() const {
  size_t n = 1;
  for (const auto& v : values) n *= v.size();
  return n;
}

Json SettingGrid::point(size_t i) const {
  Json j = Json::object();
  for (size_t k = keys.size(); k-- > 0;) {
    j[keys[k]] = values[k].at(i % values[k].size());
    i /= values[k].size();
  }
  Json ordered = Json::object();  // in the keys' order
  for (const std::string& key : keys) ordered[key] = j[key];
  return ordered;
}

std::vector<TrainSpec> FigureSpec::line_candidates(size_t line, uint64_t seed) const {
  if (is_pooled(line)) {
    const auto [f, l] = pooled_lines.at(line - values.size());
    return pooled[f].line_candidates(l, seed);
  }
  const TrainSpec spec = line_spec(line, seed);
  if (grid.empty()) return {spec};
  std::vector<TrainSpec> out;
  for (size_t i = 0; i < grid.size(); ++i) {
    TrainSpec candidate = spec_from_json(grid.point(i), spec, "[select]");
    candidate.validate = 1;
    out.push_back(std::move(candidate));
  }
  return out;
}

std::string FigureSpec::line_label(size_t line) const {
  if (is_pooled(line)) {
    const auto [f, l] = pooled_lines.at(line - values.size());
    return pooled[f].name + ": " + pooled[f].line_label(l);
  }
  const Json& v = values.at(line);
  if (vary == kVarySettings) return v.at("label").get<std::string>();
  return v.is_string() ? v.get<std::string>() : v.dump();
}

const FigureSpec* ExperimentConfig::find(const std::string& name) const {
  for (const FigureSpec& f : figures)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> ExperimentConfig::figure_names() const {
  std::vector<std::string> names;
  for (const FigureSpec& f : figures) names.push_back(f.name);
  return names;
}

std::string run_id(const TrainSpec& s) {
  return fmt::format("{}-{}-{}-L{}-s{}-{:016x}", s.task, s.pe, readable_part(s.reparam), s.l_train,
                     s.seed, fnv1a(canonical_spec_text(s)));
}

}  // namespace lenlab
