#include "lab/cli/train_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <climits>

#include "core/error.hpp"
#include "core/rope_scaling.hpp"
#include "lab/cli/cli_options.hpp"
#include "lab/cli/run_flags.hpp"
#include "reparam/reparam.hpp"
#include "train/lengths.hpp"

namespace lenlab {

namespace {

void add_train_options(CLI::App& cmd, TrainSpec& s, RunOptions& run) {
  cmd.option_defaults()->always_capture_default();
  cmd.add_option("--task", s.task,
                 "What to learn: " + join_choices(task_names()) +
                     ". The first four predict one number from a 0/1 sequence (mean-uniform: "
                     "#ones uniform in 0..l, paper App. F); the rest are token tasks, "
                     "next-token prediction on their answer rows (docs/tasks.md)");
  cmd.add_option("--pe", s.pe, "Positional encoding:" + positional_encoding_help());
  cmd.add_option("--pe-bias", s.pe_bias,
                 "--pe bias: the fixed bias added to the logit of a key d tokens back at head h, "
                 "an expression in d and h, e.g. '-(h+1)/8*log(1+d)' (ALiBi: '-2^(-8*(h+1)/H)*d' "
                 "with H heads written out)");
  add_setting(cmd, "--t5-buckets", s.t5_buckets,
              "t5: distance buckets, half exact distances, half log-spaced", 2);
  add_setting(cmd, "--t5-max-distance", s.t5_max_distance,
              "t5: where the log-spaced buckets end; farther keys share the last bucket (a "
              "built-in distance cap)",
              1);
  add_setting(cmd, "--t5-per-layer", s.t5_per_layer,
              "t5: 1 = a bucket table per layer, 0 = one table shared by the layers (T5's)", 0);
  cmd.add_option("--rope-base", s.rope_base, "rope: the base of the angles' frequencies");
  cmd.add_option("--train-rope-scaling", s.train_rope_scaling,
                 "rope: train with a context extension too, pi, ntk or yarn with "
                 "--train-rope-factor s (as fine-tuning with PI does); evaluated with the same");
  cmd.add_option("--train-rope-factor", s.train_rope_factor,
                 "With --train-rope-scaling: its factor s (yarn: the original context is the "
                 "training window / s)");
  add_setting(cmd, "--fire-width", s.fire_width, "fire: the MLP's hidden units", 1);
  cmd.add_option("--fire-threshold", s.fire_threshold,
                 "fire: its threshold L at the start, in tokens (learned from there); train = "
                 "the training window");
  cmd.add_option("--reparam", s.reparam,
                 "Target map f (OutRep: train on f(y), report error on y): " +
                     join_choices(Reparam::builtin_names()) +
                     ", or an expression in x such as 'x^-0.5' or '1/x'");
  cmd.add_option("--reparam-inverse", s.reparam_inverse,
                 "f^-1 as an expression in x (e.g. 'x^-2'); default: closed form for built-ins, "
                 "bisection for expressions");
  cmd.add_option("--reparam-shift", s.reparam_shift,
                 "Train on f(y + c): makes log and invsqrt defined at target 0 (sum, mean tasks)");
  add_setting(cmd, "--l-train", s.l_train,
              "Longest training length (lengths uniform in 1..l-train)", 1);
  add_setting(cmd, "--l-train-min", s.l_train_min,
              "Shortest training length (lengths uniform in l-train-min..l-train; = l-train: one "
              "length, paper 004's setting); 0 = the task's shortest",
              0);
  add_setting(cmd, "--l-test", s.l_test, "Evaluate at every length 1..l-test", 1);
  cmd.add_option("--lengths", s.lengths,
                 "Evaluate at these lengths only, e.g. 1..50,64,128 or 64..1024:64 (--l-test "
                 "defaults to the longest)");
  add_setting(cmd, "--n-symbols", s.token.n_symbols,
              "Token tasks but parity: content symbols of the vocabulary (recall: every length "
              "<= this)");
  add_setting(cmd, "--key-length", s.token.key_length, "passkey: symbols in the key");
  add_setting(cmd, "--markov-order", s.token.markov_order, "markov: the chain's order");
  cmd.add_option("--markov-concentration", s.token.markov_concentration,
                 "markov: Dirichlet concentration of each transition row (small: predictable)");
  add_setting(cmd, "--markov-seed", s.token.markov_seed, "markov: the chain's seed");
  add_setting(cmd, "--modulus", s.token.modulus,
              "cycle-navigation's cycle and the arithmetic tasks' modulus (the study's 5)");
  cmd.add_option("--corpus", s.token.corpus,
                 "text: a UTF-8 text file to model (default: the King James Bible the build "
                 "wrote; docs/tasks.md)");
  cmd.add_option("--depths", s.depths,
                 "passkey: the key's depths to test at, in [0, 1] or 'random' (default: " +
                     std::string(kDefaultDepths) + ")");
  add_setting(cmd, "--vcl-offset", s.vcl.offset,
              "Token tasks: loss only on tokens after this one, the earlier ones in the forward "
              "pass only (virtual-context learning; 0: off)");
  cmd.add_option("--vcl-alpha", s.vcl.alpha,
                 "With --vcl-offset: train on alpha*plain + (1-alpha)*VCL loss");
  cmd.add_option("--vcl-prefix", s.vcl.prefix,
                 "With --vcl-offset, what the tokens before it are: mask (loss weights only), "
                 "detach (keys and values pass no gradient) or random (Gaussian embeddings with "
                 "the later tokens' mean and variance)");
  cmd.add_option("--init-from", s.init_from,
                 "Fine-tune: start from the weights of the completed run in this folder (same "
                 "shape, encoding and vocabulary; a learned position table grows), with this run's "
                 "own steps, learning rate and lengths. Config files may name a figure of the "
                 "same sweep instead: init_from = \"figure:NAME\"");
  add_setting(cmd, "--random-positions", s.random_positions,
              "Positions of every sequence a sorted random subset of 0..N-1, in training and "
              "testing (randomized positions; learned, alibi, rope; 0: off)");
  cmd.add_option("--misalign-alpha", s.misalign.alpha,
                 "markov: train on L + alpha*L_misalign, the long-short misalignment of two "
                 "overlapping views (each sequence of --batch becomes two; 0: off)");
  cmd.add_option("--misalign-extra", s.misalign.extra,
                 "With --misalign-alpha: l_extra's range LO:HI, fractions of --l-train (l_extra "
                 "at least 1)");
  cmd.add_option("--misalign-kind", s.misalign.kind,
                 "With --misalign-alpha: what alpha weighs: sce (the paper's symmetric "
                 "cross-entropy) or kl (its divergence part alone, without the two entropies)");
  cmd.add_option("--misalign-control", s.misalign.control,
                 "1: the control run: train on the regularizer's two views with alpha = 0");
  add_test_time_options(cmd, s.test_attention);
  add_setting(cmd, "--steps", s.steps, "Training steps (one fresh batch each)", 1);
  add_setting(cmd, "--batch", s.batch_size, "Sequences per training batch", 1);
  add_setting(cmd, "--seed", s.seed, "Seed for the initial weights and the training data");
  add_setting(cmd, "--n-layer", s.n_layer, "Transformer blocks", 1);
  add_setting(cmd, "--d-model", s.d_model, "Hidden size", 1);
  add_setting(cmd, "--n-head", s.n_head, "Attention heads (must divide --d-model)", 1);
  add_setting(cmd, "--d-ff", s.d_ff, "MLP hidden size", 1);
  cmd.add_option("--lr", s.optimizer.lr, "Peak learning rate (AdamW)");
  add_setting(cmd, "--warmup", s.optimizer.warmup_steps, "Linear warm-up steps, then cosine decay",
              0);
  cmd.add_option("--min-lr-ratio", s.optimizer.min_lr_ratio,
                 "Cosine decays to lr times this at the last step");
  cmd.add_option("--weight-decay", s.optimizer.weight_decay,
                 "Decoupled weight decay on weight matrices");
  cmd.add_option("--clip", s.optimizer.clip_norm, "Clip gradients to this global norm (<= 0: off)");
  cmd.add_option("--precision", s.precision,
                 "Scalar type of training and evaluation: float32, or float64 (CPU only; for "
                 "comparing with another implementation without float rounding)");
  add_setting(cmd, "--eval-samples", s.eval_samples,
              "Test sequences per length (all 2^l, exactly weighted, when that is fewer)", 1);
  add_setting(cmd, "--eval-seed", s.eval_seed,
              "Seed of the test sequences (fixed so that runs are comparable)");
  add_setting(cmd, "--threads", s.threads,
              "CPU threads for this run (1 is fastest for default sizes; run several runs side "
              "by side instead)",
              1);
  cmd.add_option("--out", run.out,
                 "Folder to write manifest.json, results.csv, loss.csv and "
                 "model.safetensors into")
      ->required();
  cmd.add_flag("--overwrite", run.overwrite, "Replace a run already in --out");
  cmd.add_option("--save-init", run.save_init,
                 "Also write the weights before the first step to this file (safetensors), for "
                 "training them elsewhere (tools/torch_reference)");
  cmd.add_option("--save-batches", run.save_batches,
                 "Also write every training step's batch to this file (JSON Lines: tokens, "
                 "positions, readouts, targets, loss weights), for training on them elsewhere");
  add_device_option(cmd, run.device);
  add_budget_options(cmd, run.budget);
}

}  // namespace

TrainCommand::TrainCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "train", "Train one model, evaluate it at every length 1..l-test, write the results");
  add_train_options(*command_, spec_, run_);
  command_->footer(
      "Example:\n  lenlab train --task length --pe nope --reparam invsqrt --l-train 10 --l-test 50 "
      "--steps 2000 --seed 1 --out runs/x\n"
      "Exit status: 0 done, 1 the machine failed (e.g. a GPU error), 2 bad input (nothing "
      "written), 3 training diverged (recorded in the manifest).");
}

int TrainCommand::run(const CommandLine& line) {
  refuse_empty_flags(*command_);
  // --lengths without --l-test: test up to the longest of them.
  if (!spec_.lengths.empty() && command_->count("--l-test") == 0)
    spec_.l_test = test_lengths(spec_).back();
  run_.command_line = line.text;
  run_.log = &line.err;
  run_.log_is_tty = line.err_is_tty;
  return run_train(spec_, run_);
}

}  // namespace lenlab
