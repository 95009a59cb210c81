#include "lab/cli.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <climits>
#include <exception>
#include <filesystem>
#include <ostream>
#include <thread>

#include "core/error.hpp"
#include "core/git_revision.hpp"
#include "core/rope_scaling.hpp"
#include "core/text_file.hpp"
#include "lab/budget.hpp"
#include "lab/cli_options.hpp"
#include "lab/device.hpp"
#include "lab/eval_run.hpp"
#include "lab/experiment.hpp"
#include "lab/representation_report.hpp"
#include "lab/run_train.hpp"
#include "lab/serve/serve_command.hpp"
#include "lab/theory_command.hpp"
#include "reparam/reparam.hpp"
#include "train/lengths.hpp"

namespace lenlab {

namespace {

void add_device_option(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device,
                 "Where to train: auto (a GPU when this build has CUDA and one is present, else "
                 "the CPU), cpu or cuda")
      ->check(CLI::IsMember(device_names()));
}

// Limits checked against the estimated memory and time before any work starts (lab/budget.hpp).
void add_budget_options(CLI::App& cmd, Budget& b) {
  cmd.add_option("--max-memory", b.max_memory,
                 "Refuse work estimated to need more memory than this, e.g. 4G or 512M "
                 "(default: the memory this machine has available)");
  cmd.add_option("--max-time", b.max_time,
                 "Refuse work estimated to take longer than this, e.g. 30m, 12h, 3d");
}

// Inference-side attention (train/test_time_attention.hpp): how the trained model attends when
// it is evaluated; the same flags for `lenlab train` (its own evaluation) and `lenlab eval`.
void add_test_time_options(CLI::App& cmd, TestTimeAttention& t) {
  cmd.add_option("--n-local", t.n_local,
                 "LM-Infinite's window: each query sees only the last N keys (and the first "
                 "--n-global); 'train' = the tokens of a sequence at l_train");
  add_setting(
      cmd, "--n-global", t.n_global,
      "With --n-local: the first N keys every query also sees (the Λ-mask's global branch)");
  cmd.add_option("--distance-cap", t.distance_cap,
                 "alibi, rope: relative distances beyond D count as D; 'train' = the largest "
                 "distance seen in training");
  cmd.add_option("--rope-scaling", t.rope_scaling,
                 "rope at test time: a context extension, " + join_choices(rope_extension_names()) +
                     " (position interpolation, NTK-aware base, YaRN's ramp and logit scale, NTK "
                     "by each length)");
  cmd.add_option("--rope-factor", t.rope_factor,
                 "With --rope-scaling: its factor s, or auto = per test length, its tokens / the "
                 "training window's (dynamic-ntk: HF's factor, auto = 1)");
  cmd.add_option("--yarn-alpha", t.yarn_alpha,
                 "yarn: pairs turning fewer times than this over the training window are "
                 "interpolated (the paper's 1)");
  cmd.add_option("--yarn-beta", t.yarn_beta,
                 "yarn: pairs turning more times than this are kept (the paper's 32)");
  cmd.add_option("--temperature", t.temperature,
                 "Divide every attention logit by this (softmax temperature; 1 = as trained), or "
                 "auto-pmax / auto-entropy: per length past l_train, the temperature paper 002's "
                 "search aligns with training");
  cmd.add_option("--temperature-min", t.temperature_min,
                 "With an auto temperature: the lowest temperature the search tries (its grid runs "
                 "from 1 down to this; Algorithm 1's 0.5)");
  cmd.add_option("--temperature-step", t.temperature_step,
                 "With an auto temperature: the search grid's spacing (Algorithm 1's 0.05)");
  cmd.add_flag("--attention-stats", t.attention_stats,
               "Also write attention.csv: per length, layer and head the mean attention entropy "
               "and largest attention probability");
}

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

void add_eval_options(CLI::App& cmd, EvalOptions& o) {
  cmd.add_option("run", o.run_dir, "A trained run's folder (lenlab train's --out)")->required();
  cmd.add_option("--lengths", o.lengths,
                 "Test lengths, e.g. 1..50,64,128,256,512,1024 or 64..1024:64 (default: the "
                 "run's own)");
  add_setting(cmd, "--samples", o.samples,
              "Test sequences per length (all 2^l, exactly weighted, when that is fewer; "
              "default: the run's --eval-samples)")
      ->check(int_range(1, kMaxLength));
  add_setting(cmd, "--eval-seed", o.eval_seed,
              "Seed of the test sequences (default: the run's, so that results compare)");
  cmd.add_option("--depths", o.depths,
                 "passkey: the key's depths, in [0, 1] or 'random' (default: the run's)");
  cmd.add_option("--out", o.out, "Folder to write results.csv, eval.json and predictions.csv into")
      ->required();
  cmd.add_flag("--predictions", o.predictions,
               "Also write predictions.csv: every test sequence's input, target and output");
  add_setting(cmd, "--threads", o.threads, "CPU threads (default: the run's)")
      ->check(int_range(1, thread_limit(), " (4 per core of this machine)"));
  add_test_time_options(cmd, o.attention);
  CLI::Option* representation = cmd.add_flag(
      "--representation-stats", o.representation_stats,
      "Also write representation.csv: per length and layer, how far the attention outputs lie "
      "from those at l_train (sliced Wasserstein-1, JS distance, KL divergence; paper 004's "
      "measurement, docs/methods.md)");
  add_setting(cmd, "--representation-projections", o.representation_projections,
              "With --representation-stats: the random directions the distances are averaged over")
      ->check(int_range(1, kMaxRepresentationProjections))
      ->needs(representation);
  cmd.add_flag("--overwrite", o.overwrite, "Replace an evaluation already in --out");
  add_device_option(cmd, o.device);
  add_budget_options(cmd, o.budget);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Options shared by `reproduce` and `run CONFIG`.
void add_experiment_options(CLI::App& cmd, ExperimentOptions& o, std::string& figures) {
  cmd.option_defaults()->always_capture_default();
  cmd.add_option("--out", o.out,
                 "Folder for the runs, figures, CSVs and report.md (required unless --dry-run)");
  cmd.add_option("--figures", figures, "Comma-separated figure names (default: all in the config)");
  add_setting(cmd, "--seeds", o.n_seeds, "Seeds 1..N for every line (default: the config's seeds)")
      ->check(int_range(1, INT32_MAX));
  add_setting(cmd, "--jobs", o.jobs,
              "Runs trained side by side on the CPU, or groups of runs on the GPU (default: one "
              "per core)")
      ->check(int_range(1, thread_limit(), " (4 per core of this machine)"));
  add_device_option(cmd, o.device);
  add_budget_options(cmd, o.budget);
  cmd.add_option("--emit-slurm", o.emit_slurm,
                 "Write a SLURM job-array script into this folder instead of training (one array "
                 "task per run); draw the figures afterwards with lenlab plot");
  cmd.add_option("--gnuplot", o.plot.gnuplot, "The gnuplot program that draws the figures");
  cmd.add_flag("--dry-run", o.dry_run,
               "Print the runs and how long they would take on this machine (runs already "
               "finished in --out left out); train nothing, write nothing");
}

}  // namespace

int lenlab_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                bool err_is_tty) {
  CLI::App app{
      "lenlab: a laboratory for length generalization in small transformers.\n"
      "Trains decoder-only transformers on synthetic 0/1-sequence tasks at short lengths and tests "
      "them at long ones.",
      "lenlab"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("lenlab 0.1.0 ({})", git_revision()));

  TrainSpec spec;
  RunOptions run;
  CLI::App* train = app.add_subcommand(
      "train", "Train one model, evaluate it at every length 1..l-test, write the results");
  add_train_options(*train, spec, run);
  train->footer(
      "Example:\n  lenlab train --task length --pe nope --reparam invsqrt --l-train 10 --l-test 50 "
      "--steps 2000 --seed 1 --out runs/x\n"
      "Exit status: 0 done, 1 the machine failed (e.g. a GPU error), 2 bad input (nothing "
      "written), 3 training diverged (recorded in the manifest).");

  ExperimentOptions exp;
  exp.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string figures, config_path;
  CLI::App* reproduce = app.add_subcommand(
      "reproduce",
      "Reproduce the paper's synthetic figures (configs/paper.toml, built in): train "
      "every run, draw the figures, write report.md");
  add_experiment_options(*reproduce, exp, figures);
  reproduce->add_option("--config", config_path,
                        "Use this experiment config instead of the built-in paper one");
  reproduce->footer(
      "Examples:\n  lenlab reproduce --out figures/\n"
      "  lenlab reproduce --figures 1b,1c --seeds 5 --out figures/\n"
      "A killed reproduce loses only the runs in flight: run it again to finish the rest.");

  CLI::App* run_cmd = app.add_subcommand(
      "run",
      "Run an experiment config (a copy of configs/paper.toml, edited): train, draw, report");
  run_cmd->add_option("config", config_path, "The experiment config (TOML)")->required();
  add_experiment_options(*run_cmd, exp, figures);
  add_setting(*run_cmd, "--run-index", exp.run_index,
              "Train only this run of the plan (0-based; what a SLURM array task does)")
      ->check(int_range(0, INT32_MAX));

  EvalOptions eval;
  CLI::App* eval_cmd =
      app.add_subcommand("eval", "Evaluate a trained run at any test lengths, without retraining");
  add_eval_options(*eval_cmd, eval);
  eval_cmd->footer(
      "Example:\n  lenlab eval runs/x --lengths 1..50,64,128,256,512,1024 --samples 100 --out "
      "runs/x-long --predictions");

  std::string plot_dir;
  PlotOptions plot_options;
  CLI::App* plot = app.add_subcommand(
      "plot", "Redraw the figures, CSVs and report.md of an experiment folder from its runs");
  plot->add_option("dir", plot_dir, "The experiment folder (--out of reproduce or run)")
      ->required();
  plot->add_option("--gnuplot", plot_options.gnuplot, "The gnuplot program")->capture_default_str();

  RepresentationReportOptions representation;
  CLI::App* representation_cmd = app.add_subcommand(
      "representation",
      "Paper 004's claim on your runs: does the attention outputs' distance from l_train predict "
      "the excess loss? Reads `lenlab eval --representation-stats` folders; writes points.csv, "
      "report.md (correlations) and a figure per encoding");
  representation_cmd->add_option("dirs", representation.dirs, "The evaluation folders")->required();
  representation_cmd->add_option("--out", representation.out, "Folder to write the report into")
      ->required();
  representation_cmd->add_option("--gnuplot", representation.plot.gnuplot, "The gnuplot program")
      ->capture_default_str();
  representation_cmd->footer(
      "Example:\n"
      "  for r in runs/*/; do\n"
      "    lenlab eval $r --representation-stats --out evals/$(basename $r)\n"
      "  done\n"
      "  lenlab representation evals/* --out representation/");

  TheoryCommand theory(app);
  ServeCommand serve(app);

  // CLI11 would say "A subcommand is required" for a misspelt one: name it and list the commands.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* c : app.get_subcommands({})) names.push_back(c->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      err << fmt::format(
          "lenlab: error: unknown command '{}'; valid commands: {} (see lenlab "
          "--help)\n",
          argv[1], join_choices(names));
      return kExitUsage;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    std::string sub;
    for (const CLI::App* c : {train, reproduce, run_cmd, plot, eval_cmd, representation_cmd})
      if (c->parsed()) sub = c->get_name() + " ";
    if (theory.parsed()) sub = "theory ";
    if (serve.parsed()) sub = "serve ";
    err << "lenlab: error: " << e.what() << " (see lenlab " << sub << "--help)\n";
    return kExitUsage;
  }

  try {
    if (theory.parsed()) return theory.run(out);
    if (serve.parsed()) return serve.run(out);
    if (plot->parsed()) return plot_experiment(plot_dir, plot_options, &err);
    if (representation_cmd->parsed()) {
      representation.log = &err;
      return run_representation_report(representation);
    }
    if (reproduce->parsed() || run_cmd->parsed()) {
      if (config_path.empty()) {
        exp.config_text = paper_config_text();
        exp.config_source = "configs/paper.toml (built in)";
      } else {
        exp.config_text = read_text_file(config_path);
        exp.config_source = config_path;
      }
      exp.figures = split_commas(figures);
      exp.log = &err;
      exp.print = &out;
      exp.log_is_tty = err_is_tty;
      exp.lenlab_path = std::filesystem::absolute(argv[0]).string();
      return run_experiment(exp);
    }
    std::string command_line;
    for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
    for (CLI::App* c : {train, eval_cmd}) {  // "" is the unset value: given, it is a mistake
      if (c->parsed() && c->count("--lengths") > 0 &&
          c->get_option("--lengths")->as<std::string>().empty())
        throw UsageError(
            "--lengths '': no lengths; write lengths and ranges separated by commas, "
            "e.g. 1..50,64,128");
      if (c->parsed() && c->count("--depths") > 0 &&
          c->get_option("--depths")->as<std::string>().empty())
        parse_depths("", "--depths");  // its message names the grammar
    }
    for (CLI::App* c : {train, eval_cmd})
      for (const char* flag : {"--n-local", "--distance-cap"})  // "" is their unset value
        if (c->parsed() && c->count(flag) > 0 && c->get_option(flag)->as<std::string>().empty())
          throw UsageError(fmt::format("{} '': give 'train' or an integer >= 1", flag));
    if (eval_cmd->parsed()) {
      eval.has_eval_seed = eval_cmd->count("--eval-seed") > 0;
      eval.command_line = command_line;
      eval.log = &err;
      eval.log_is_tty = err_is_tty;
      return run_eval(eval);
    }
    // --lengths without --l-test: test up to the longest of them.
    if (!spec.lengths.empty() && train->count("--l-test") == 0)
      spec.l_test = test_lengths(spec).back();
    run.command_line = command_line;
    run.log = &err;
    run.log_is_tty = err_is_tty;
    return run_train(spec, run);
  } catch (const UsageError& e) {
    err << "lenlab: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {  // e.g. cuda::CudaError: the input was fine, the machine not
    err << "lenlab: error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace lenlab
