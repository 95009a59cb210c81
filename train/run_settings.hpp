#pragma once
// Everything that defines one training run, as a user writes it (CLI flags, later config files),
// and its validated, parsed form. Every field has the default documented in `lenlab train --help`.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/config.hpp"
#include "models/optimizer.hpp"
#include "reparam/reparam.hpp"
#include "tasks/markov.hpp"
#include "tasks/task.hpp"
#include "tasks/token_tasks.hpp"
#include "train/inference_settings.hpp"
#include "train/misalign_regularizer.hpp"
#include "train/until_fit.hpp"
#include "train/vcl.hpp"

namespace lenlab {

struct TrainSpec {
  std::string task = "length";
  std::string pe = "nope";
  // The encodings' settings (models/config.hpp, docs/model.md); each applies to its encoding only.
  std::string pe_bias;         // --pe bias: b(d, h) as an expression
  int t5_buckets = 32;         // t5
  int t5_max_distance = 128;   // t5
  int t5_per_layer = 0;        // t5: 1 = a table per layer, 0 = one shared (T5's)
  double rope_base = 10000.0;  // rope
  // rope: a context extension in training too (models/rope_scaling.hpp): pi, ntk or yarn with its
  // factor s, as when a model is fine-tuned with PI; evaluated with the same unless
  // test_attention.rope_scaling replaces it. "" = plain.
  std::string train_rope_scaling;
  double train_rope_factor = 1.0;
  // The token embedding's multiplier (models/config.hpp): "1", "sqrt_d" (√d_model, Vaswani et al.
  // §3.4) or a number > 0.
  std::string embedding_scale = "1";
  int fire_width = 32;                   // fire: the MLP's hidden units
  std::string fire_threshold = "train";  // fire: L at the start, in tokens; train = the window
  std::string reparam = "identity";
  std::string reparam_inverse;  // empty: closed form for built-ins, numerical for expressions
  double reparam_shift = 0.0;   // train on f(y + c)
  int l_train = 10;
  // Training lengths are uniform in [l_train_min, l_train]; 0: from the task's shortest
  // (shortest_length: 1, passkey key_length + 1, a few Chomsky-hierarchy tasks 2 or 3). l_train_min
  // = l_train trains at one length M (paper 004's setting).
  int l_train_min = 0;
  int l_test = 50;
  // Test lengths (train/lengths.hpp), all within 1..l_test; empty: every length 1..l_test. Given
  // without l_test (a flag or config key), l_test becomes its largest length.
  std::string lengths;
  // The token tasks' settings (tasks/token_tasks.hpp, docs/tasks.md); the scalar tasks ignore them.
  TokenTaskSettings token;
  // Passkey's test depths (train/lengths.hpp's parse_depths); empty: kDefaultDepths.
  std::string depths;
  // Training-side methods (docs/methods.md): virtual-context learning (train/vcl.hpp).
  VclSettings vcl;
  // Fine-tuning (lab/run/init_from.hpp): the folder of a completed run whose weights this run
  // starts from ("": a fresh model), and that run's id, which the lab sets from its manifest. Ids
  // and manifests name the parent by id, never by path: to_json leaves init_from out.
  std::string init_from;
  std::string init_parent;
  // Randomized positions (train/random_positions.hpp): > 0, every sequence's positions are a
  // sorted random subset of 0..random_positions−1, in training and testing; 0: off.
  int random_positions = 0;
  // The long-short misalignment regularizer (train/misalign_regularizer.hpp; markov only).
  MisalignRegularizer misalign;
  // Inference-side methods (train/inference_attention.hpp): how the trained model attends when it
  // is evaluated. Training never reads them, so runs that differ only here share their training
  // (lab/run/run_group_impl.hpp trains one model for them).
  TestTimeAttention test_attention;
  int steps = 2000;
  // Stop before --steps once the training range is learned or learning stalls
  // (train/until_fit.hpp).
  UntilFitSettings until_fit;
  // 1: also score the trained model on the stop rule's validation sequences (train/until_fit.hpp),
  // written to the manifest's "validation": what a config's [select] chooses by.
  int validate = 0;
  int batch_size = 64;
  uint64_t seed = 1;
  int n_layer = 2;
  int d_model = 64;
  int n_head = 4;
  int d_ff = 256;
  OptimizerConfig optimizer;
  // The scalar type of training and evaluation: "float32", or "float64" (CPU only: the double
  // instantiation the gradient checks use, for comparing training with another implementation
  // without float rounding; tools/torch_reference).
  std::string precision = "float32";
  int eval_samples = 500;         // per length; exact enumeration when 2^l is not larger
  uint64_t eval_seed = 20240601;  // fixed across runs so every run sees the same test sequences
  int threads = 1;
};

// The spec with names parsed and cross-checked.
// Training lengths [lo, hi], uniform (passkey's hi is at least its lo).
struct LengthRange {
  int lo = 1, hi = 1;
};

struct ResolvedSpec {
  TaskKind task;
  ModelConfig model;
  Reparam reparam;
  std::vector<int> test_lengths;  // sorted: `lengths`, or 1..l_test (passkey: k+1..l_test)
  // Token tasks only: the chain (markov) and the test depths (passkey; kNoDepth for random);
  // every other task has one "depth", kNoDepth.
  std::shared_ptr<const MarkovChain> chain;
  std::vector<double> depths = {kNoDepth};
  bool float64 = false;       // precision "float64"
  LengthRange train_lengths;  // training_lengths(spec)
};

// Throws UsageError naming the first bad value and the valid choices (or range).
ResolvedSpec resolve(const TrainSpec& spec);
// The model a spec trains (ResolvedSpec::model before its checks): its shape, encoding and
// encoding settings, vocabulary and heads. Throws UsageError on an unknown task or encoding only.
ModelConfig model_config(const TrainSpec& spec);
// The RoPE extension a run trains with (--train-rope-scaling, --train-rope-factor; kNone when not
// given), its original length the training window / s. UsageError for dynamic-ntk, a factor that
// is not finite and > 0, or a factor without a kind.
RopeScaling training_rope_scaling(const TrainSpec& spec);
// The training lengths of a spec: [l_train_min or the task's shortest, l_train].
LengthRange training_lengths(const TrainSpec& spec);
// FIRE's threshold L at the start: the training window in tokens ("train"), or the number given
// (UsageError unless finite and >= 1).
double fire_threshold_of(const TrainSpec& spec);

// The target map --reparam with its inverse --reparam-inverse and shift --reparam-shift, each
// mistake a UsageError naming the flag that gave it (the reparam parser knows no flags).
Reparam reparam_of(const std::string& f, const std::string& inverse, double shift);

// Tokens of one sequence of `length` of the task (BOS and EOS included for the scalar tasks).
int64_t tokens_per_sequence(TaskKind task, const TokenTaskSettings& token, int length);

// The longest length, and the largest batch or number of test sequences, a spec may ask for.
inline constexpr int kMaxLength = 1'000'000;
// Threads a run, or runs side by side, may use: 4 per core of this machine.
int thread_limit();

// The test lengths of a spec: parse_lengths(lengths), or shortest_length..l_test
// (UsageError on a bad list).
std::vector<int> test_lengths(const TrainSpec& spec);

// Flat {key: value} in visit_spec_fields order (train/setting_rows.hpp), init_from (a path) left
// out. Settings added after the first results were published (every row without kInEveryId) are
// left out while at their defaults, so that earlier runs keep their ids and manifests; unless one
// of the row's conditions holds (Setting::in_id_when).
nlohmann::ordered_json to_json(const TrainSpec& spec);
// The inverse of to_json; every key must be known and of the right type (UsageError naming it,
// prefixed with `where`, e.g. a file name). Missing keys keep `base`'s values.
TrainSpec spec_from_json(const nlohmann::ordered_json& j, const TrainSpec& base,
                         const std::string& where);
// Every setting as compact JSON in a fixed key order: equal text means an equal run.
std::string canonical_spec_text(const TrainSpec& spec);
// The same for what training reads: runs with equal text train the same model (they differ at most
// in their test-time attention).
std::string training_spec_text(const TrainSpec& spec);

}  // namespace lenlab

#include "train/setting_rows.hpp"  // visit_spec_fields: every setting's row
