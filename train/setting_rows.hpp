#pragma once
// Every setting of a run, in one place: visit_spec_fields(spec, visit) calls visit(row, field) for
// each, the row its Setting (core/setting.hpp: key, help, flag, range, traits) and the field a
// std::string, int, double or uint64_t of the spec. Config files, manifests, run ids, the CLI's
// flags, the Python keywords and the page's fields all go through these rows, so a new setting is
// its field and its row, and no one can forget it. The order is the JSON's (run ids hash it): a
// new row goes anywhere, but rows never move. Included by train/run_settings.hpp.
#include "core/setting.hpp"
#include "models/positional_encodings.hpp"
#include "reparam/reparam.hpp"
#include "tasks/task.hpp"
#include "train/inference_settings.hpp"
#include "train/lengths.hpp"

namespace lenlab {

template <class Spec, class Visit>
void visit_spec_fields(Spec& s, Visit&& visit) {
  using S = Setting;
  constexpr unsigned kId = S::kInEveryId;
  visit(S{.key = "task",
          .help = "What to learn: {}. The first four predict one number from a 0/1 sequence "
                  "(mean-uniform: #ones uniform in 0..l, paper App. F); the rest are token tasks, "
                  "next-token prediction on their answer rows (docs/tasks.md)",
          .traits = kId,
          .choices = [] { return join_choices(task_names()); }},
        s.task);
  visit(S{.key = "pe",
          .help = "Positional encoding:{}",
          .traits = kId,
          .choices = positional_encoding_help},
        s.pe);
  visit(S{.key = "pe_bias",
          .help = "--pe bias: the fixed bias added to the logit of a key d tokens back at head h, "
                  "an expression in d and h, e.g. '-(h+1)/8*log(1+d)' (ALiBi: "
                  "'-2^(-8*(h+1)/H)*d' with H heads written out)"},
        s.pe_bias);
  visit(S{.key = "t5_buckets",
          .help = "t5: distance buckets, half exact distances, half log-spaced",
          .min = 2,
          .encoding = "t5"},
        s.t5_buckets);
  visit(S{.key = "t5_max_distance",
          .help = "t5: where the log-spaced buckets end; farther keys share the last bucket (a "
                  "built-in distance cap)",
          .min = 1,
          .encoding = "t5"},
        s.t5_max_distance);
  visit(S{.key = "t5_per_layer",
          .help = "t5: 1 = a bucket table per layer, 0 = one table shared by the layers (T5's)",
          .min = 0,
          .encoding = "t5"},
        s.t5_per_layer);
  visit(S{.key = "rope_base",
          .help = "rope: the base of the angles' frequencies",
          .encoding = "rope"},
        s.rope_base);
  visit(S{.key = "train_rope_scaling",
          .help = "rope: train with a context extension too, pi, ntk or yarn with "
                  "--train-rope-factor s (as fine-tuning with PI does); evaluated with the same",
          .encoding = "rope"},
        s.train_rope_scaling);
  visit(S{.key = "train_rope_factor",
          .help = "With --train-rope-scaling: its factor s (yarn: the original context is the "
                  "training window / s)",
          .encoding = "rope"},
        s.train_rope_factor);
  visit(
      S{.key = "fire_width", .help = "fire: the MLP's hidden units", .min = 1, .encoding = "fire"},
      s.fire_width);
  visit(S{.key = "fire_threshold",
          .help = "fire: its threshold L at the start, in tokens (learned from there); train = "
                  "the training window",
          .encoding = "fire"},
        s.fire_threshold);
  visit(S{.key = "reparam",
          .help = "Target map f (OutRep: train on f(y), report error on y): {}, or an expression "
                  "in x such as 'x^-0.5' or '1/x'",
          .traits = kId,
          .choices = [] { return join_choices(Reparam::builtin_names()); }},
        s.reparam);
  visit(S{.key = "reparam_inverse",
          .help = "f^-1 as an expression in x (e.g. 'x^-2'); default: closed form for built-ins, "
                  "bisection for expressions",
          .traits = kId},
        s.reparam_inverse);
  visit(S{.key = "reparam_shift",
          .help = "Train on f(y + c): makes log and invsqrt defined at target 0 (sum, mean tasks)",
          .traits = kId},
        s.reparam_shift);
  visit(S{.key = "l_train",
          .help = "Longest training length (lengths uniform in 1..l-train)",
          .traits = kId,
          .min = 1},
        s.l_train);
  visit(S{.key = "l_train_min",
          .help = "Shortest training length (lengths uniform in l-train-min..l-train; = l-train: "
                  "one length, paper 004's setting); 0 = the task's shortest",
          .min = 0},
        s.l_train_min);
  visit(S{.key = "l_test", .help = "Evaluate at every length 1..l-test", .traits = kId, .min = 1},
        s.l_test);
  visit(S{.key = "lengths",
          .help = "Evaluate at these lengths only, e.g. 1..50,64,128 or 64..1024:64 (--l-test "
                  "defaults to the longest)"},
        s.lengths);
  visit(S{.key = "n_symbols",
          .help = "Token tasks but parity: content symbols of the vocabulary (recall: every length "
                  "<= this)"},
        s.token.n_symbols);
  visit(S{.key = "key_length", .help = "passkey: symbols in the key"}, s.token.key_length);
  visit(S{.key = "markov_order", .help = "markov: the chain's order"}, s.token.markov_order);
  visit(S{.key = "markov_concentration",
          .help = "markov: Dirichlet concentration of each transition row (small: predictable)"},
        s.token.markov_concentration);
  visit(S{.key = "markov_seed", .help = "markov: the chain's seed"}, s.token.markov_seed);
  visit(S{.key = "modulus",
          .help = "cycle-navigation's cycle and the arithmetic tasks' modulus (the study's 5)"},
        s.token.modulus);
  visit(S{.key = "corpus",
          .help = "text: a UTF-8 text file to model (default: the King James Bible the build "
                  "wrote; docs/tasks.md)",
          .traits = S::kServerPath},
        s.token.corpus);
  visit(S{.key = "depths",
          .help = "passkey: the key's depths to test at, in [0, 1] or 'random' (default: {})",
          .choices = [] { return std::string(kDefaultDepths); }},
        s.depths);
  visit(S{.key = "vcl_offset",
          .help = "Token tasks: loss only on tokens after this one, the earlier ones in the "
                  "forward pass only (virtual-context learning; 0: off)",
          .label = "Virtual offset"},
        s.vcl.offset);
  visit(S{.key = "vcl_alpha",
          .help = "With --vcl-offset: train on alpha*plain + (1-alpha)*VCL loss",
          .label = "Mixing weight α"},
        s.vcl.alpha);
  visit(S{.key = "vcl_prefix",
          .help = "With --vcl-offset, what the tokens before it are: mask (loss weights only), "
                  "detach (keys and values pass no gradient) or random (Gaussian embeddings with "
                  "the later tokens' mean and variance)"},
        s.vcl.prefix);
  visit(S{.key = "init_from",
          .help = "Fine-tune: start from the weights of the completed run in this folder (same "
                  "shape, encoding and vocabulary; a learned position table grows), with this "
                  "run's own steps, learning rate and lengths. Config files may name a figure of "
                  "the same sweep instead: init_from = \"figure:NAME\"",
          .traits = S::kServerPath},
        s.init_from);
  visit(S{.key = "init_parent", .traits = S::kInternal}, s.init_parent);
  visit(S{.key = "random_positions",
          .help = "Positions of every sequence a sorted random subset of 0..N-1, in training and "
                  "testing (randomized positions; every encoding that reads positions, all but "
                  "nope; 0: off)",
          .label = "Position range"},
        s.random_positions);
  visit(S{.key = "misalign_alpha",
          .help = "markov: train on L + alpha*L_misalign, the long-short misalignment of two "
                  "overlapping views (each sequence of --batch becomes two; 0: off)",
          .label = "Regularizer weight α"},
        s.misalign.alpha);
  visit(S{.key = "misalign_extra",
          .help = "With --misalign-alpha: l_extra's range LO:HI, fractions of --l-train (l_extra "
                  "at least 1)"},
        s.misalign.extra);
  visit(S{.key = "misalign_kind",
          .help = "With --misalign-alpha: what alpha weighs: sce (the paper's symmetric "
                  "cross-entropy) or kl (its divergence part alone, without the two entropies)",
          .label = "Divergence"},
        s.misalign.kind);
  visit(S{.key = "misalign_control",
          .help = "1: the control run: train on the regularizer's two views with alpha = 0"},
        s.misalign.control);
  visit_test_time_settings(s.test_attention, visit);
  visit(S{.key = "steps", .help = "Training steps (one fresh batch each)", .traits = kId, .min = 1},
        s.steps);
  visit(S{.key = "until_fit",
          .help = "Stop before --steps once the model fits its training range on validation "
                  "sequences (its task's in-range rule, e.g. token accuracy >= 0.99) or its "
                  "score stops improving (--fit-patience); --steps is the cap",
          .traits = S::kSwitch,
          .label = "Train until fit"},
        s.until_fit.on);
  visit(S{.key = "fit_every",
          .help = "With --until-fit: training steps between two validation checks",
          .min = 1},
        s.until_fit.every);
  visit(S{.key = "fit_patience",
          .help = "With --until-fit: checks without a better validation score before the run "
                  "stops as stalled (0: stop only when the range is learned)",
          .min = 0},
        s.until_fit.patience);
  visit(S{.key = "fit_samples",
          .help = "With --until-fit or --validate: validation sequences per training length "
                  "(drawn apart from the test sequences)",
          .min = 1},
        s.until_fit.samples);
  visit(S{.key = "validate",
          .help = "Also score the trained model on validation sequences inside its training range "
                  "(--until-fit's rule and --fit-samples, drawn apart from the test's), written to "
                  "the manifest's validation; a config's [select] chooses settings by it",
          .traits = S::kSwitch},
        s.validate);
  visit(S{.key = "batch_size",
          .help = "Sequences per training batch",
          .traits = kId,
          .min = 1,
          .flag = "--batch"},
        s.batch_size);
  visit(
      S{.key = "seed", .help = "Seed for the initial weights and the training data", .traits = kId},
      s.seed);
  visit(S{.key = "n_layer", .help = "Transformer blocks", .traits = kId, .min = 1}, s.n_layer);
  visit(S{.key = "d_model", .help = "Hidden size", .traits = kId, .min = 1}, s.d_model);
  visit(S{.key = "n_head",
          .help = "Attention heads (must divide --d-model)",
          .traits = kId,
          .min = 1},
        s.n_head);
  visit(S{.key = "d_ff", .help = "MLP hidden size", .traits = kId, .min = 1}, s.d_ff);
  visit(S{.key = "embedding_scale",
          .help = "Multiply the token embedding by this before adding a position table: 1 "
                  "(GPT-2's), sqrt_d (sqrt(d_model), Vaswani et al. 3.4, the sinusoidal "
                  "baseline's) or a number > 0"},
        s.embedding_scale);
  visit(S{.key = "lr", .help = "Peak learning rate (AdamW)", .traits = kId}, s.optimizer.lr);
  visit(S{.key = "beta1", .help = "AdamW's first-moment decay", .traits = kId}, s.optimizer.beta1);
  visit(S{.key = "beta2", .help = "AdamW's second-moment decay", .traits = kId}, s.optimizer.beta2);
  visit(S{.key = "adam_eps", .help = "AdamW's epsilon", .traits = kId}, s.optimizer.eps);
  visit(
      S{.key = "weight_decay", .help = "Decoupled weight decay on weight matrices", .traits = kId},
      s.optimizer.weight_decay);
  visit(S{.key = "warmup_steps",
          .help = "Linear warm-up steps, then cosine decay",
          .traits = kId,
          .min = 0,
          .flag = "--warmup"},
        s.optimizer.warmup_steps);
  visit(S{.key = "min_lr_ratio",
          .help = "Cosine decays to lr times this at the last step",
          .traits = kId},
        s.optimizer.min_lr_ratio);
  visit(S{.key = "clip_norm",
          .help = "Clip gradients to this global norm (<= 0: off)",
          .traits = kId,
          .flag = "--clip"},
        s.optimizer.clip_norm);
  visit(S{.key = "precision",
          .help = "Scalar type of training and evaluation: float32, or float64 (CPU only; for "
                  "comparing with another implementation without float rounding)"},
        s.precision);
  visit(S{.key = "eval_samples",
          .help = "Test sequences per length (all 2^l, exactly weighted, when that is fewer)",
          .traits = kId,
          .min = 1},
        s.eval_samples);
  visit(S{.key = "eval_seed",
          .help = "Seed of the test sequences (fixed so that runs are comparable)",
          .traits = kId},
        s.eval_seed);
  visit(S{.key = "threads",
          .help = "CPU threads for this run (1 is fastest for default sizes; run several runs side "
                  "by side instead)",
          .traits = kId,
          .min = 1},
        s.threads);
}

}  // namespace lenlab
