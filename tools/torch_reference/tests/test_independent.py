"""PyTorch's own draws (tools/torch_reference/independent.py) against what lenlab draws: the initial
weights' names, shapes, order and distribution, and the passkey batches' distribution, each
against a lenlab run's --save-init and --save-batches files; the training arm that reads lenlab's
files against `retrain`; and odds.py's small pieces.

Skips, saying why, only when torch cannot be imported or the lenlab binary is missing.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")
stats = pytest.importorskip("scipy.stats", reason="SciPy is not installed (Debian: python3-scipy)")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from torch_reference.compare import retrain  # noqa: E402
from torch_reference.files import read_batches, read_manifest, read_safetensors  # noqa: E402
from torch_reference.independent import (INITS, own_initial_weights,  # noqa: E402
                                         passkey_batches, pytorch_default_weights,
                                         token_task_layout, train_arm)
from torch_reference.odds import (arms_of, bootstrap_interval, holm, parse_seeds,  # noqa: E402
                                  read_results, run_odds, shared)

BINARY = os.environ.get("LENLAB_BINARY", "")
if not pathlib.Path(BINARY).is_file():
    pytest.skip(f"no lenlab binary at LENLAB_BINARY={BINARY!r}", allow_module_level=True)

torch.set_num_threads(1)

PASSKEY = ["--task", "passkey", "--key-length", "3", "--n-symbols", "8", "--l-train", "9",
           "--l-test", "9", "--n-layer", "2", "--d-model", "32", "--n-head", "2", "--d-ff", "48",
           "--batch", "16", "--eval-samples", "4", "--warmup", "10"]


def saved_run(tmp: pathlib.Path, flags: list[str], steps: int, seed: int = 1) -> pathlib.Path:
    run = tmp / f"run-{seed}"
    done = subprocess.run([BINARY, "train", *flags, "--steps", str(steps), "--seed", str(seed),
                           "--out", str(run), "--save-init", str(tmp / f"init-{seed}.safetensors"),
                           "--save-batches", str(tmp / f"batches-{seed}.jsonl")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return run


@pytest.mark.parametrize("pe,extra", [("nope", []), ("rope", []), ("alibi", []),
                                      ("sinusoidal", []), ("t5", []),
                                      ("t5", ["--t5-per-layer", "1", "--t5-buckets", "8"])])
def test_own_initial_weights_have_lenlab_s_layout_and_distribution(tmp_path, pe, extra):
    run = saved_run(tmp_path, PASSKEY + ["--pe", pe] + extra, 1)
    config = read_manifest(run)["config"]
    theirs = read_safetensors(tmp_path / "init-1.safetensors")
    ours = own_initial_weights(config, theirs["wte"].shape[0], seed=7)
    assert list(ours) == list(theirs), "names or order differ from lenlab's checkpoint"
    stated = {name: std for name, _, std in token_task_layout(config, theirs["wte"].shape[0])}
    for name, a in theirs.items():
        assert ours[name].shape == a.shape, name
        std = stated[name]
        if std <= 0:  # constants: both exactly the stated value
            value = 1.0 if std < 0 else 0.0
            assert np.all(ours[name] == value) and np.all(a == value), name
            continue
        # Each draw's sample standard deviation against the stated one: its relative sampling
        # error is about 1/sqrt(2n); 6 of those is a bound a right draw passes and a wrong
        # (0.02 for the residual 0.01, say) fails at these sizes (n >= 256).
        bound = 6.0 / np.sqrt(2.0 * a.size)
        for who, w in (("lenlab", a), ("own", ours[name])):
            rel = abs(float(np.std(w.astype(np.float64))) / std - 1.0)
            assert rel < bound, f"{name}: {who}'s draw has std {np.std(w):.4g}, stated {std:.4g}"
            assert abs(float(np.mean(w))) < 6.0 * std / np.sqrt(a.size), f"{name}: {who}'s mean"


def test_pytorch_default_weights_are_pytorch_s_module_defaults():
    config = {"pe": "t5", "n_layer": 2, "d_model": 32, "d_ff": 48, "n_head": 2, "t5_buckets": 8}
    w = pytorch_default_weights(config, 12, seed=5)
    assert list(w) == [name for name, _, _ in token_task_layout(config, 12)]
    for name in ("wte", "pe.t5.bias"):  # nn.Embedding: N(0, 1)
        assert abs(float(np.std(w[name])) - 1.0) < 6.0 / np.sqrt(2.0 * w[name].size), name
    for name, fan_in in (("h.0.attn.c_attn.weight", 32), ("h.0.attn.c_attn.bias", 32),
                         ("h.1.mlp.c_proj.weight", 48), ("lm_head.bias", 32)):
        bound = 1.0 / np.sqrt(fan_in)  # nn.Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        a = w[name]
        assert np.abs(a).max() <= bound and np.abs(a).max() > 0.9 * bound, name
        assert abs(float(np.std(a)) / (bound / np.sqrt(3.0)) - 1.0) < 6.0 / np.sqrt(a.size), name
    assert np.all(w["ln_f.weight"] == 1.0) and np.all(w["h.1.ln_2.bias"] == 0.0)
    # The two halves: PyTorch's defaults for the embedding only, or for the linear layers only;
    # every other tensor is lenlab's distribution as own_initial_weights draws it.
    own = own_initial_weights(config, 12, seed=5)
    embedding = INITS["pytorch-default-embedding"](config, 12, 5)
    linear = INITS["pytorch-default-linear"](config, 12, 5)
    assert np.array_equal(embedding["wte"], w["wte"]) and np.array_equal(linear["wte"], own["wte"])
    for name in ("h.0.attn.c_attn.weight", "h.1.mlp.c_proj.bias", "lm_head.weight"):
        assert np.array_equal(embedding[name], own[name]) and np.array_equal(linear[name], w[name])
    for name in ("pe.t5.bias", "h.0.ln_1.weight", "ln_f.bias"):
        assert np.array_equal(embedding[name], own[name])
        assert np.array_equal(linear[name], own[name])


def histogram_of(steps, k: int, n_symbols: int):
    """(length, fills before MARK) pairs and key symbols of the batches' sequences."""
    shapes, symbols = Counter(), Counter()
    mark = n_symbols + 3
    for step in steps:
        offsets = step["offsets"]
        for b, e in zip(offsets[:-1], offsets[1:]):
            seq = step["tokens"][b:e]
            before = seq.index(mark) - 1
            shapes[(len(seq) - k - 2, before)] += 1
            symbols.update(seq[before + 2:before + 2 + k])
    return shapes, symbols


@pytest.mark.parametrize("extra", [[], ["--l-train-min", "7"]], ids=["plain", "l_train_min"])
def test_own_passkey_batches_have_lenlab_s_layout_and_distribution(tmp_path, extra):
    k, n = 3, 8
    run = saved_run(tmp_path, PASSKEY + ["--pe", "nope"] + extra, 300)
    config = read_manifest(run)["config"]
    theirs = list(read_batches(tmp_path / "batches-1.jsonl"))
    ours = list(passkey_batches(config, seed=11))
    assert len(ours) == len(theirs) == 300
    for a, b in zip(ours[:5], theirs[:5]):
        assert set(a) == set(b), "the fields differ from lenlab's batch log"
        assert len(a["offsets"]) == len(b["offsets"]) == 17
        assert sum(a["token_weights"]) == pytest.approx(1.0, abs=1e-12)
        assert a["token_weights"][0] == b["token_weights"][0]
    for step in ours:  # every sequence: BOS F.. MARK key F.. SEP key, each answer row its label
        for b, e in zip(step["offsets"][:-1], step["offsets"][1:]):
            seq = step["tokens"][b:e]
            assert seq[0] == n and seq.count(n + 3) == 1 and seq[-k - 1] == n + 1
            assert step["positions"][b:e] == list(range(e - b))
            m = seq.index(n + 3)
            assert seq[m + 1:m + 1 + k] == seq[-k:]
        rows, labels = step["token_rows"], step["token_labels"]
        assert [step["tokens"][r + 1] for r in rows] == labels
    # The same distribution: the same (length, fills before MARK) cells drawn (a sampler off by one
    # in either range draws a cell lenlab never does, or misses one), and chi-square tests of
    # homogeneity of the two samples (4800 sequences each) over those cells and the key symbols.
    # Fixed seeds, so the outcome is fixed.
    (shape_a, sym_a), (shape_b, sym_b) = histogram_of(ours, k, n), histogram_of(theirs, k, n)
    assert set(shape_a) == set(shape_b), "the (length, depth) cells drawn differ"
    for a, b in ((shape_a, shape_b), (sym_a, sym_b)):
        cells = sorted(set(a) | set(b))
        p = stats.chi2_contingency([[a[c] for c in cells], [b[c] for c in cells]])[1]
        assert p > 1e-3, f"the two samplers' distributions differ (p = {p:.3g})"


def test_training_on_a_run_s_start_and_batches_is_retrain(tmp_path):
    run = saved_run(tmp_path, PASSKEY + ["--pe", "rope"], 30)
    a = train_arm(run, "run", "run", seed=3, dtype=torch.float64)
    b = retrain(run, dtype=torch.float64)
    assert a.log.loss == b.log.loss


def test_own_draws_train_and_differ_by_seed(tmp_path):
    run = saved_run(tmp_path, PASSKEY + ["--pe", "rope"], 150)
    one, two = (train_arm(run, "own", "own", seed=s, dtype=torch.float64) for s in (1, 2))
    assert one.log.loss[0] != two.log.loss[0]
    for r in (one, two):  # from log(8 symbols) = 2.08 toward the task
        assert r.log.loss[0] > 1.9 and np.mean(r.log.loss[-10:]) < 0.75 * r.log.loss[0]


def test_the_own_draws_refuse_what_they_do_not_know(tmp_path):
    config = {"pe": "kerple", "n_layer": 1, "d_model": 8, "d_ff": 8, "n_head": 2}
    with pytest.raises(SystemExit, match="random_positions = 40.*use --data run"):
        next(passkey_batches({"task": "passkey", "l_train": 8, "batch_size": 2, "steps": 1,
                              "random_positions": 40}, 1))
    with pytest.raises(SystemExit, match="kerple.*nope, rope, alibi, sinusoidal, t5"):
        own_initial_weights(config, 12, 1)
    with pytest.raises(SystemExit, match="only the passkey task"):
        next(passkey_batches({"task": "copy"}, 1))
    with pytest.raises(SystemExit, match="l_train >= 5"):
        next(passkey_batches({"task": "passkey", "key_length": 4, "l_train": 3,
                              "batch_size": 2, "steps": 1}, 1))


def test_odds_pieces(tmp_path):
    assert parse_seeds("1..3,7") == [1, 2, 3, 7]
    with pytest.raises(SystemExit, match="1..12"):
        parse_seeds("one")
    # Holm by hand: sorted 0.01, 0.02, 0.04 times 3, 2, 1 -> 0.03, 0.04, 0.04 (monotone).
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert [a for a, _, _ in arms_of(["own"], ["own"])] == ["torch-run-init-run-data",
                                                            "torch-own-init-own-data"]
    with pytest.raises(SystemExit, match="--inits lenlab: choose from run, own"):
        arms_of(["lenlab"], ["own"])
    a, b = np.array([1.0, 1.2, 0.8, 1.1]), np.array([0.1, 0.0, 0.2, 0.1])
    lo, hi = bootstrap_interval(a, b, paired=False)
    assert 0.6 < lo < 0.95 < hi < 1.2  # the difference of means, 0.925, inside
    lo, hi = bootstrap_interval(a, a - 0.5, paired=True)
    assert lo == hi == pytest.approx(0.5)  # every pair differs by 0.5: no spread at all
    assert shared(("run", "own"), ("run", "run")) == "start"
    assert shared(("own", "run"), ("run", "run")) == "batches"
    assert shared(("own", "own"), ("own", "own")) == ""
    (tmp_path / "results.csv").write_text(
        "length,depth,token_accuracy,exact_match\n5,0,1,1\n5,1,1,0.5\n16,0,0.5,0.25\n")
    assert read_results(tmp_path / "results.csv") == {5: 0.75, 16: 0.25}


def test_odds_trains_every_arm_scores_it_and_keeps_what_is_done(tmp_path, capsys):
    flags = [("12" if f == "9" and PASSKEY[i - 1] == "--l-test" else f)
             for i, f in enumerate(PASSKEY)]
    flags += ["--pe", "rope", "--steps", "20", "--lengths", "4..9,12"]
    assert run_odds(BINARY, tmp_path, "1..2", flags, 1, ["run", "own"], ["own"]) == 0
    text = (tmp_path / "odds.md").read_text()
    for arm in ("lenlab", "torch-run-init-run-data", "torch-run-init-own-data",
                "torch-own-init-own-data"):
        assert f"| {arm} |" in text
    rows = (tmp_path / "odds.csv").read_text().splitlines()
    assert rows[0] == "seed,arm,in_range,past_l_train,L4,L5,L6,L7,L8,L9,L12"
    assert "| torch-run-init-own-data | run | own |" in text and "| start |" in text
    assert "## Exact match per test length" in text
    assert "| arm | 12 |" in text  # the per-length table: the one length past l_train 9
    assert len(rows) == 1 + 2 * 4
    # Run again: nothing is trained, the same table comes back.
    stamp = (tmp_path / "s1" / "torch-own-init-own-data" / "model.safetensors").stat().st_mtime_ns
    assert run_odds(BINARY, tmp_path, "1..2", flags, 1, ["run", "own"], ["own"]) == 0
    assert (tmp_path / "odds.md").read_text() == text
    assert (tmp_path / "s1" / "torch-own-init-own-data" / "model.safetensors").stat() \
        .st_mtime_ns == stamp
