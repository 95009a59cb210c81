"""Training that owes lenlab nothing but its documentation: initial weights drawn by PyTorch from
the distribution docs/model.md states, and passkey batches drawn by PyTorch from the distribution
docs/tasks.md states. Either can stand in for lenlab's (a run's --save-init checkpoint, its
--save-batches log), so the two sources of a run's randomness can be swapped one at a time.

- own_initial_weights: GPT-2's initialisation as docs/model.md states it: N(0, 0.02) for the
  token embedding, W_qkv, W_fc and the token head; N(0, 0.02/sqrt(2 n_layer))
  for the residual projections W_o and W_proj; zero biases, unit layer-norm gains; T5's bucket
  biases 0. Names, shapes and order are lenlab's (models/parameters.hpp), written out from the
  config.
- pytorch_default_weights: the same layout as PyTorch's modules initialise themselves, for an
  implementation that keeps PyTorch's defaults (not lenlab's distribution); mixed_weights takes
  those defaults for some tensors only (the embedding, or the linear layers).
- passkey_batches: docs/tasks.md's passkey: per sequence a length L uniform in (k+1)..l_train
  (from l_train_min where that is longer), a
  number of fills before MARK uniform in 0..L-k-1, k content symbols uniform in 0..n-1, then
  BOS F..F MARK key F..F SEP key; positions 0.. within a sequence; the k answer rows SEP..SEP+k-1
  each with loss weight 1/(S k).
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from .compare import Retrained, run_files
from .files import read_batches, read_manifest, read_safetensors
from lenlab.torch import ModelConfig
from .trainer import OptimizerSettings, to_parameters, train

# The token tasks' vocabulary (docs/tasks.md): content symbols 0..n-1, then BOS, SEP, FILL, MARK.
SPECIALS = ("BOS", "SEP", "FILL", "MARK")
# Encodings whose parameters (if any) are written out below; learned positions' row count and
# KERPLE's and FIRE's initial values are not part of docs/model.md's statement.
OWN_INIT_ENCODINGS = ("nope", "rope", "alibi", "sinusoidal", "t5")


def special(name: str, n_symbols: int) -> int:
    return n_symbols + SPECIALS.index(name)


def token_task_layout(config: dict, vocab_size: int) -> list[tuple[str, tuple[int, ...], float]]:
    """(name, shape, standard deviation) of every parameter of a token-task model, in lenlab's
    order; a standard deviation of 0 means zero, and -1 means one (a layer norm's gain)."""
    pe = str(config["pe"])
    if pe not in OWN_INIT_ENCODINGS:
        raise SystemExit(f"--init: pe {pe!r} has no initialisation written here; choose one of "
                         f"{', '.join(OWN_INIT_ENCODINGS)} (or --init run)")
    n_layer, d, d_ff = int(config["n_layer"]), int(config["d_model"]), int(config["d_ff"])
    residual = 0.02 / math.sqrt(2.0 * n_layer)
    out = [("wte", (vocab_size, d), 0.02)]
    if pe == "t5":
        tables = n_layer if int(config.get("t5_per_layer", 0)) else 1
        out.append(("pe.t5.bias", (tables, int(config.get("t5_buckets", 32)),
                                   int(config["n_head"])), 0.0))
    for l in range(n_layer):
        h = f"h.{l}."
        out += [(h + "ln_1.weight", (d,), -1.0), (h + "ln_1.bias", (d,), 0.0),
                (h + "attn.c_attn.weight", (d, 3 * d), 0.02),
                (h + "attn.c_attn.bias", (3 * d,), 0.0),
                (h + "attn.c_proj.weight", (d, d), residual), (h + "attn.c_proj.bias", (d,), 0.0),
                (h + "ln_2.weight", (d,), -1.0), (h + "ln_2.bias", (d,), 0.0),
                (h + "mlp.c_fc.weight", (d, d_ff), 0.02), (h + "mlp.c_fc.bias", (d_ff,), 0.0),
                (h + "mlp.c_proj.weight", (d_ff, d), residual), (h + "mlp.c_proj.bias", (d,), 0.0)]
    out += [("ln_f.weight", (d,), -1.0), ("ln_f.bias", (d,), 0.0),
            ("lm_head.weight", (d, vocab_size), 0.02), ("lm_head.bias", (vocab_size,), 0.0)]
    return out


def own_initial_weights(config: dict, vocab_size: int, seed: int) -> dict[str, np.ndarray]:
    """The layout's weights drawn by torch.randn from a generator seeded with `seed` (float64,
    in the layout's order; to_parameters rounds them to the training dtype)."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape, std in token_task_layout(config, vocab_size):
        if std > 0:
            a = torch.randn(shape, generator=g, dtype=torch.float64) * std
        else:
            a = torch.full(shape, 1.0 if std < 0 else 0.0, dtype=torch.float64)
        out[name] = a.numpy()
    return out


def pytorch_default_weights(config: dict, vocab_size: int, seed: int) -> dict[str, np.ndarray]:
    """The same layout initialised as PyTorch's modules initialise themselves when nothing else is
    asked: nn.Linear's weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform_ with
    a = sqrt(5)), nn.Embedding's N(0, 1) (T5's bucket table is one), nn.LayerNorm's ones and
    zeros. Not lenlab's distribution: what an implementation that keeps PyTorch's defaults
    trains from."""
    g = torch.Generator().manual_seed(seed)
    layout = token_task_layout(config, vocab_size)
    fan_in = {name: shape[0] for name, shape, _ in layout if name.endswith(".weight")
              and len(shape) == 2}
    out = {}
    for name, shape, std in layout:
        if name in ("wte", "pe.t5.bias"):
            a = torch.randn(shape, generator=g, dtype=torch.float64)
        elif std < 0 or name.startswith("ln_") or ".ln_" in name:  # layer norms
            a = torch.full(shape, 1.0 if std < 0 else 0.0, dtype=torch.float64)
        else:  # a linear layer's weight [in, out] or bias [out]
            bound = 1.0 / math.sqrt(fan_in[name.rsplit(".", 1)[0] + ".weight"])
            a = (torch.rand(shape, generator=g, dtype=torch.float64) * 2.0 - 1.0) * bound
        out[name] = a.numpy()
    return out


def mixed_weights(default_for):
    """lenlab's distribution (own_initial_weights) except the tensors `default_for(name)` picks,
    which take PyTorch's defaults: to tell which part of the defaults moves a result."""
    def draw(config: dict, vocab_size: int, seed: int) -> dict[str, np.ndarray]:
        ours = own_initial_weights(config, vocab_size, seed)
        theirs = pytorch_default_weights(config, vocab_size, seed)
        return {name: theirs[name] if default_for(name) else a for name, a in ours.items()}
    return draw


INITS = {"own": own_initial_weights, "pytorch-default": pytorch_default_weights,
         # PyTorch's N(0, 1) for the token embedding only; its U(±1/sqrt(fan_in)) for the linear
         # layers' weights and biases only (the attention, MLP and token head)
         "pytorch-default-embedding": mixed_weights(lambda name: name == "wte"),
         "pytorch-default-linear": mixed_weights(
             lambda name: name != "wte" and not name.startswith("pe.") and "ln_" not in name)}


# Settings that change lenlab's training batches beyond the plain passkey distribution; the own
# sampler refuses a run that sets one (its value other than the default, 0).
NOT_SAMPLED = ("random_positions", "vcl_offset", "misalign_alpha")


def passkey_sequence(g: torch.Generator, shortest: int, l_train: int, k: int, n_symbols: int):
    """(tokens, index of SEP): one training sequence of docs/tasks.md's passkey."""
    def uniform(lo: int, hi: int) -> int:  # inclusive
        return int(torch.randint(lo, hi + 1, (1,), generator=g))
    length = uniform(shortest, l_train)
    free = length - k - 1
    before = uniform(0, free)
    key = torch.randint(0, n_symbols, (k,), generator=g).tolist()
    fill = special("FILL", n_symbols)
    tokens = ([special("BOS", n_symbols)] + [fill] * before + [special("MARK", n_symbols)] + key
              + [fill] * (free - before))
    sep = len(tokens)
    return tokens + [special("SEP", n_symbols)] + key, sep


def passkey_batches(config: dict, seed: int) -> Iterator[dict]:
    """config["steps"] batches of config["batch_size"] passkey sequences, each a dict of the batch
    log's fields (train/batch_log.hpp), drawn from a generator seeded with `seed`."""
    if config.get("task") != "passkey":
        raise SystemExit(f"--data own: only the passkey task has a sampler here, not "
                         f"{config.get('task')!r}")
    k, n = int(config.get("key_length", 4)), int(config.get("n_symbols", 16))
    l_train, S = int(config["l_train"]), int(config["batch_size"])
    if l_train < k + 1:
        raise SystemExit(f"--data own: a passkey of {k} symbols needs l_train >= {k + 1}, got "
                         f"{l_train}")
    for key in NOT_SAMPLED:
        if float(config.get(key, 0) or 0) != 0:
            raise SystemExit(f"--data own: the run sets {key} = {config[key]}, which the own "
                             f"sampler does not draw (it draws plain passkey batches); use --data "
                             f"run")
    shortest = max(k + 1, int(config.get("l_train_min", 1)))  # --l-train-min raises the shortest
    g = torch.Generator().manual_seed(seed)
    weight = 1.0 / (S * k)
    for step in range(int(config["steps"])):
        tokens, positions, offsets, rows, labels = [], [], [0], [], []
        for _ in range(S):
            seq, sep = passkey_sequence(g, shortest, l_train, k, n)
            begin = offsets[-1]
            rows += [begin + sep + i for i in range(k)]
            labels += seq[sep + 1:sep + 1 + k]
            tokens += seq
            positions += list(range(len(seq)))
            offsets.append(begin + len(seq))
        yield {"step": step + 1, "tokens": tokens, "positions": positions, "offsets": offsets,
               "token_rows": rows, "token_labels": labels, "token_weights": [weight] * len(rows)}


# Where each arm's randomness comes from: "run" = the lenlab run's saved file, "own" = drawn here
# from lenlab's documented distribution; initial weights also "pytorch-default".
INIT_SOURCES = ("run", *INITS)
DATA_SOURCES = ("run", "own")
# The own sampler's generator is seeded apart from the own initialisation's, so that one seed
# gives two unrelated streams.
DATA_SEED_OFFSET = 1_000_003


def train_arm(run_dir: Path, init: str, data: str, seed: int,
              dtype: torch.dtype = torch.float32) -> Retrained:
    """The run's config trained in PyTorch, its initial weights and batches each taken from the run
    (`run`: its --save-init and --save-batches files) or drawn here from `seed` (`own`, or the
    initial weights as `pytorch-default` draws them)."""
    for what, source, valid in (("--init", init, INIT_SOURCES), ("--data", data, DATA_SOURCES)):
        if source not in valid:
            raise SystemExit(f"{what} {source!r}: choose one of {', '.join(valid)}")
    run_dir = Path(run_dir)
    config = read_manifest(run_dir)["config"]
    if init == "run" or data == "run":
        config, init_path, batches_path = run_files(run_dir)
    if init == "run":
        weights = read_safetensors(init_path)
        vocab = int(weights["wte"].shape[0])
    else:
        vocab = int(config.get("n_symbols", 16)) + len(SPECIALS)
        weights = INITS[init](config, vocab, seed)
    total = int(config["steps"])
    batches = (itertools.islice(read_batches(batches_path), total) if data == "run"
               else passkey_batches(config, seed + DATA_SEED_OFFSET))
    params = to_parameters(weights, dtype)
    log = train(ModelConfig.from_run(config, weights), params, batches, total,
                OptimizerSettings.from_run(config))
    return Retrained(log, params, dtype, len(log.loss))
