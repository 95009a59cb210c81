// A checkpoint is the model its manifest describes (models/checkpoint.hpp): load_checkpoint
// refuses missing and unexpected tensors, naming them and the encodings, and a checkpoint whose
// metadata records another encoding than the model's. Hand-made files of each kind.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/checkpoint.hpp"
#include "models/parameters.hpp"
#include "models/safetensors.hpp"
#include "tests/support/test_support.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;

namespace {

TrainSpec spec_with(const std::string& pe) {
  TrainSpec s;
  s.d_model = 16;
  s.n_head = 2;
  s.d_ff = 32;
  s.pe = pe;
  return s;
}

// A checkpoint of `spec`'s model (weights 0.5) with its config in the metadata, as a run saves it.
fs::path saved(const TempDir& dir, const TrainSpec& spec, const std::string& name) {
  const ModelConfig config = model_config(spec);
  const std::vector<double> params(parameter_count(config), 0.5);
  const fs::path p = dir.path / name;
  save_checkpoint(p, config, params.data(), {{"config", to_json(spec).dump()}});
  return p;
}

}  // namespace

TEST_CASE("a checkpoint of the manifest's model loads") {
  TempDir dir;
  const TrainSpec rope = spec_with("rope");
  const std::vector<double> got =
      load_checkpoint(saved(dir, rope, "m.safetensors"), model_config(rope));
  CHECK(got.size() == parameter_count(model_config(rope)));
  CHECK(got.front() == 0.5);
}

TEST_CASE("a learned table under a rope manifest is refused, naming wpe and both encodings") {
  TempDir dir;
  const fs::path p = saved(dir, spec_with("learned"), "learned.safetensors");
  const std::string msg =
      usage_message([&] { load_checkpoint(p, model_config(spec_with("rope"))); });
  CHECK(contains(msg, p.string()));
  CHECK(contains(msg, "encoding 'rope'"));
  CHECK(contains(msg, "records encoding 'learned'"));
  CHECK(contains(msg, "unexpected tensors wpe"));
  // The other way round: the table the learned model needs is missing.
  const fs::path q = saved(dir, spec_with("rope"), "rope.safetensors");
  const std::string back =
      usage_message([&] { load_checkpoint(q, model_config(spec_with("learned"))); });
  CHECK(contains(back, "missing tensors wpe"));
  CHECK(contains(back, "encoding 'learned'"));
  CHECK(contains(back, "records encoding 'rope'"));
}

TEST_CASE("missing and unexpected tensors are all named, metadata or none") {
  TempDir dir;
  const ModelConfig config = model_config(spec_with("nope"));
  SafeTensors st = load_safetensors(saved(dir, spec_with("nope"), "m.safetensors"));
  st.metadata.clear();  // a file written elsewhere, recording no encoding
  const std::string dropped = st.tensors.front().name;
  st.tensors.erase(st.tensors.begin());
  st.tensors.push_back({"extra.bias", {2}, {1.0, 2.0}, "F32"});
  const fs::path p = dir.path / "edited.safetensors";
  save_safetensors(p, st);
  const std::string msg = usage_message([&] { load_checkpoint(p, config); });
  CHECK(contains(msg, "missing tensors " + dropped));
  CHECK(contains(msg, "; unexpected tensors extra.bias"));
  CHECK(contains(msg, "encoding 'nope'"));
  CHECK(!contains(msg, "records encoding"));
}

TEST_CASE("the same tensors under another recorded encoding are refused") {
  TempDir dir;
  // nope and alibi have the same tensors (alibi's bias is fixed): only the metadata tells them
  // apart.
  const TrainSpec nope = spec_with("nope"), alibi = spec_with("alibi");
  REQUIRE(parameter_count(model_config(nope)) == parameter_count(model_config(alibi)));
  const fs::path p = saved(dir, alibi, "alibi.safetensors");
  const std::string msg = usage_message([&] { load_checkpoint(p, model_config(nope)); });
  CHECK(contains(msg, "records encoding 'alibi'"));
  CHECK(contains(msg, "encoding 'nope'"));
  CHECK_NOTHROW(load_checkpoint(p, model_config(alibi)));
}
