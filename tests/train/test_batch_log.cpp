// The files a run writes for comparing its training elsewhere (tools/torch_reference): the batch
// log's lines against the batches the trainer drew, the step-0 checkpoint against the model's
// initialisation, float64 runs, and the streaming atomic writer they go through.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "models/checkpoint.hpp"
#include "models/cpu/backend.hpp"
#include "models/model.hpp"
#include "models/safetensors.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"
#include "tests/support/cli_support.hpp"
#include "train/batch_log.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;
using Json = nlohmann::json;

TEST_CASE("a batch log line holds the batch, its f(y) targets and its loss weights, nothing more") {
  Rng rng(3);
  const Batch scalar = sample_train_batch(TaskKind::kSum, 5, 4, rng);
  const std::vector<double> f = {0.5, 1.0 / 3.0, 2.0, 1e-300};  // any values: written back exactly
  const Json j = Json::parse(batch_log_line(7, scalar, f.data()));
  CHECK(j.at("step") == 7);
  CHECK(j.at("tokens").get<std::vector<int>>() == scalar.tokens);
  CHECK(j.at("positions").get<std::vector<int>>() == scalar.positions);
  CHECK(j.at("offsets").get<std::vector<int>>() == scalar.offsets);
  CHECK(j.at("scalar_rows").get<std::vector<int>>() == scalar.read_rows);
  CHECK(j.at("scalar_targets").get<std::vector<double>>() == f);  // bit for bit
  // Empty weights mean 1/R each: the log holds the weights the loss applies.
  CHECK(j.at("scalar_weights").get<std::vector<double>>() == std::vector<double>(4, 0.25));
  CHECK_FALSE(j.contains("token_rows"));
  CHECK_FALSE(j.contains("pair_first"));

  TokenTaskSettings settings;
  settings.key_length = 3;
  const Batch passkey = token_train_batch(TaskKind::kPasskey, settings, nullptr, 9, 3, rng);
  const Json t = Json::parse(batch_log_line(1, passkey, nullptr));
  CHECK(t.at("token_rows").get<std::vector<int>>() == passkey.token.rows);
  CHECK(t.at("token_labels").get<std::vector<int>>() == passkey.token.labels);
  CHECK(t.at("token_weights").get<std::vector<double>>() == passkey.token.weights);
  CHECK_FALSE(t.contains("scalar_rows"));
}

TEST_CASE("--save-init and --save-batches write the start and every step, without them nothing") {
  const fs::path dir = run_dir("batch_log");
  std::vector<std::string> args = tiny_args(dir / "run");
  *(std::find(args.begin(), args.end(), "--task") + 1) = "passkey";
  *(std::find(args.begin(), args.end(), "--l-train") + 1) = "6";
  args.insert(args.end(), {"--key-length", "2"});
  CliResult r = run_cli(args);
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  const Json plain = Json::parse(read_text(dir / "run" / "manifest.json"));
  CHECK_FALSE(plain.contains("init_checkpoint"));
  CHECK_FALSE(plain.contains("batch_log"));
  const std::string plain_loss = read_text(dir / "run" / "loss.csv");

  args.insert(args.end(), {"--overwrite", "--save-init", (dir / "w0.safetensors").string(),
                           "--save-batches", (dir / "sub" / "batches.jsonl").string()});
  r = run_cli(args);
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  // The same run: asking for the files changes no number it writes.
  CHECK(read_text(dir / "run" / "loss.csv") == plain_loss);
  const Json m = Json::parse(read_text(dir / "run" / "manifest.json"));
  CHECK(m.at("init_checkpoint") == fs::absolute(dir / "w0.safetensors").string());
  CHECK(m.at("batch_log") == fs::absolute(dir / "sub" / "batches.jsonl").string());

  // The step-0 weights are the model's initialisation with the run's seed.
  const ResolvedSpec resolved = resolve([] {
    TrainSpec s;
    s.task = "passkey";
    s.token.key_length = 2;
    s.l_train = 6;
    s.l_test = kTinyLTest;
    s.d_model = 16;
    s.n_head = 2;
    s.d_ff = 32;
    return s;
  }());
  Transformer<float> fresh(resolved.model);
  fresh.init(1);
  const std::vector<float> expected = fresh.parameters(0);
  std::vector<float> saved(expected.size());
  load_checkpoint(dir / "w0.safetensors", resolved.model, saved.data());
  CHECK(saved == expected);
  CHECK(load_safetensors(dir / "w0.safetensors").metadata.at("step") == "0");

  // One line per step, steps 1..n in order, each a passkey batch of --batch sequences.
  const std::vector<std::string> lines = split(read_text(dir / "sub" / "batches.jsonl"), '\n');
  REQUIRE(lines.size() == static_cast<size_t>(kTinySteps));
  for (int s = 0; s < kTinySteps; ++s) {
    const Json j = Json::parse(lines[s]);
    CHECK(j.at("step") == s + 1);
    CHECK(j.at("offsets").size() == 65);  // the default --batch 64, plus the leading 0
    CHECK(j.at("token_rows").size() == 2 * 64);
  }
  // The folder holds the run's own files only (no temporaries).
  CHECK(snapshot(dir / "sub").size() == 1);
  CHECK(snapshot(dir / "sub").count("batches.jsonl") == 1);
}

TEST_CASE("a float64 run trains in double: its checkpoints are F64 and its numbers differ") {
  const fs::path dir = run_dir("float64");
  std::vector<std::string> args = tiny_args(dir / "f32");
  REQUIRE(run_cli(args).rc == 0);
  args = tiny_args(dir / "f64");
  args.insert(args.end(), {"--precision", "float64", "--save-init", (dir / "w0").string()});
  const CliResult r = run_cli(args);
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  CHECK(load_safetensors(dir / "w0").tensors.front().dtype == "F64");
  CHECK(load_safetensors(dir / "f64" / "model.safetensors").tensors.front().dtype == "F64");
  CHECK(Json::parse(read_text(dir / "f64" / "manifest.json"))["config"]["precision"] == "float64");
  // float32 runs keep their config (and so their ids) without the key.
  CHECK_FALSE(
      Json::parse(read_text(dir / "f32" / "manifest.json"))["config"].contains("precision"));
  const auto f32 = read_csv(dir / "f32" / "loss.csv"), f64 = read_csv(dir / "f64" / "loss.csv");
  REQUIRE(f32.size() == f64.size());
  const double a = std::stod(f32.back().at("loss")), b = std::stod(f64.back().at("loss"));
  CHECK(a != b);                                // not the float run relabelled
  CHECK(std::abs(a - b) < 1e-3 * std::abs(b));  // but the same training to float rounding
  // lenlab eval of a float64 run evaluates in double: the run's own rows, to the digit.
  const CliResult e = run_cli({"eval", (dir / "f64").string(), "--out", (dir / "e").string()});
  REQUIRE_MESSAGE(e.rc == 0, e.err);
  CHECK(read_csv(dir / "e" / "results.csv") == read_csv(dir / "f64" / "results.csv"));
}

TEST_CASE("AtomicFileWriter: whole at commit, nothing left when dropped, errors name the path") {
  TempDir dir;
  const fs::path p = dir.path / "log.jsonl";
  {
    AtomicFileWriter w(p);
    w.append("a\n");
    CHECK_FALSE(fs::exists(p));  // only the temporary exists while writing
    w.append("b\n");
    w.commit();
  }
  CHECK(read_text(p) == "a\nb\n");
  {
    AtomicFileWriter w(p);  // dropped without commit: the old content stays
    w.append("partial");
  }
  CHECK(read_text(p) == "a\nb\n");
  CHECK(dir.names() == std::vector<std::string>{"log.jsonl"});
  CHECK(contains(usage_message([&] { AtomicFileWriter w(dir.path / "absent" / "x"); }),
                 (dir.path / "absent" / "x").string()));
  CHECK(contains(usage_message([&] { ensure_writable_file(dir.path, "--save-init"); }),
                 "--save-init"));
}
