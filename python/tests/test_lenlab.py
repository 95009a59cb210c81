"""The Python module against the CLI: same seed, same numbers; Python reparams against built-ins;
errors with the CLI's messages; a Python exception in f surfaces as one. Tiny runs (a few
seconds each). Run by ctest ("python module: pytest") with PYTHONPATH set to the build's python/."""

import json
import math
import os
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

import lenlab

from support import LENLAB, TINY, cli_train


def test_same_seed_same_numbers_as_the_cli(tmp_path):
    py = lenlab.train(out=tmp_path / "py", progress=False, **TINY)
    cli = cli_train(tmp_path / "cli", **TINY)
    assert py.status == "completed"
    assert (tmp_path / "py" / "loss.csv").read_text() == (tmp_path / "cli" / "loss.csv").read_text()
    assert (tmp_path / "py" / "results.csv").read_text() == \
        (tmp_path / "cli" / "results.csv").read_text()
    assert py.config == cli.config
    np.testing.assert_array_equal(py.results["mse"], cli.results["mse"])
    assert py.results["length"].tolist() == list(range(1, 9))
    assert len(py.loss["loss"]) == TINY["steps"]
    for name, w in py.parameters.items():
        assert w.dtype == np.float32
        np.testing.assert_array_equal(w, cli.parameters[name])
    assert py.parameters["wte"].shape[1] == TINY["d_model"]


def test_fine_tuning_from_python_is_the_clis_and_names_the_parent_by_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # out=None: runs/<run id> here
    parent = lenlab.train(progress=False, **TINY)
    tuned = dict(TINY, steps=20, l_train=6, lr=3e-4)
    py = lenlab.train(out=tmp_path / "py", progress=False, init_from=str(parent.dir), **tuned)
    cli = cli_train(tmp_path / "cli", init_from=str(parent.dir), **tuned)
    assert (tmp_path / "py" / "loss.csv").read_text() == (tmp_path / "cli" / "loss.csv").read_text()
    assert py.config == cli.config
    assert py.config["init_parent"] == parent.dir.name == py.manifest["init_from"]["run_id"]
    assert "init_from" not in py.config
    # The default folder's name is the id, which holds the parent's id.
    assert lenlab.train(progress=False, init_from=str(parent.dir), **tuned).dir.name != \
        lenlab.train(progress=False, **tuned).dir.name
    with pytest.raises(lenlab.UsageError, match="no such folder"):
        lenlab.train(out=tmp_path / "x", progress=False, init_from=str(tmp_path / "absent"), **TINY)


def test_a_python_function_equal_to_a_builtin_gives_the_builtins_run(tmp_path):
    builtin = lenlab.train(out=tmp_path / "builtin", progress=False, reparam="sqrt", **TINY)

    def root(y):
        return np.sqrt(y)

    def square(z):
        return z * z

    custom = lenlab.train(out=tmp_path / "custom", progress=False, reparam=(root, square), **TINY)
    assert custom.config["reparam"] == "python:root"
    assert (tmp_path / "custom" / "loss.csv").read_text() == \
        (tmp_path / "builtin" / "loss.csv").read_text()
    np.testing.assert_allclose(custom.results["mse"], builtin.results["mse"], rtol=1e-12)
    # Without the inverse: bisection, to its tolerance.
    numeric = lenlab.train(out=tmp_path / "numeric", progress=False, reparam=root, **TINY)
    np.testing.assert_allclose(numeric.results["mse"], builtin.results["mse"], rtol=1e-6)


def test_evaluation_with_other_lengths_and_predictions(tmp_path):
    run = lenlab.train(out=tmp_path / "run", progress=False, **TINY)
    ev = run.eval(lengths="2,10", samples=16)
    assert ev.results["length"].tolist() == [2.0, 10.0]
    # Length 2 has 4 sequences, all enumerated; length 10 its 16 samples.
    assert len(ev.predictions["prediction"]) == 4 + 16
    assert ev.dir == tmp_path / "run" / "eval-1"
    tau = run.eval(lengths="1..12", samples=16, temperature="auto-pmax", temperature_min=0.6)
    assert "temperature_search" in tau.info["attention"]
    # Paper 004's measurement: the CLI's file, zero at l_train, the same numbers as the CLI's.
    rep = run.eval(lengths="2,4,8", samples=16, representation_stats=True,
                   representation_projections=8)
    plain = run.eval(lengths="2,4,8", samples=16)
    assert rep.results["mse"].tolist() == plain.results["mse"].tolist()
    r = rep.representation
    assert r["length"].tolist() == [2.0, 4.0, 8.0]  # one layer
    assert r["sliced_w1"][1] == 0.0 and r["sliced_w1"][2] > 0
    assert rep.info["representation"]["projections"] == 8
    cli = subprocess.run([LENLAB, "eval", str(run.dir), "--lengths", "2,4,8", "--samples", "16",
                          "--representation-stats", "--representation-projections", "8",
                          "--out", str(tmp_path / "cli-rep")], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert ((tmp_path / "cli-rep" / "representation.csv").read_text()
            == (rep.dir / "representation.csv").read_text())
    with pytest.raises(lenlab.UsageError, match="--representation-projections must be in"):
        run.eval(representation_stats=True, representation_projections=0)


def test_bad_settings_raise_usage_errors_with_the_clis_message(tmp_path):
    with pytest.raises(lenlab.UsageError, match="unknown setting 'stepz'"):
        lenlab.train(out=tmp_path / "x", progress=False, stepz=3)
    with pytest.raises(lenlab.UsageError, match="unknown task 'lenght'"):
        lenlab.train(out=tmp_path / "x", progress=False, task="lenght")
    with pytest.raises(lenlab.UsageError, match="'steps' must be an integer"):
        lenlab.train(out=tmp_path / "x", progress=False, steps="many")
    with pytest.raises(lenlab.UsageError, match="reparam must be"):
        lenlab.train(out=tmp_path / "x", progress=False, reparam=3)
    with pytest.raises(lenlab.UsageError, match="give the function a name"):
        lenlab.train(out=tmp_path / "x", progress=False, reparam=lambda y: y)
    assert not (tmp_path / "x").exists()
    with pytest.raises(lenlab.UsageError, match="holds no run"):
        lenlab.load(tmp_path)
    # A reparam that is not monotone is refused by the same domain check as an expression.

    def bump(y):
        return (y - 3.0) ** 2

    with pytest.raises(lenlab.UsageError, match="monotone"):
        lenlab.train(out=tmp_path / "x", progress=False, reparam=bump, **TINY)


def test_a_python_exception_inside_f_surfaces_as_itself(tmp_path):
    def broken(y):
        raise ZeroDivisionError("f broke")

    with pytest.raises(ZeroDivisionError, match="f broke"):
        lenlab.train(out=tmp_path / "x", progress=False, reparam=broken, **TINY)

    calls, fail_at = [], [None]

    def fails_later(y):  # passes the checks, then raises in a training batch
        calls.append(len(y))
        if len(calls) == fail_at[0]:
            raise ArithmeticError("f broke in training")
        return np.sqrt(y)

    lenlab.train(out=tmp_path / "probe", progress=False, reparam=fails_later,
                 **dict(TINY, steps=1))
    checks = len(calls) - 1  # the calls before training's one: the domain check's
    calls.clear()
    fail_at[0] = checks + 5
    with pytest.raises(ArithmeticError, match="f broke in training"):
        lenlab.train(out=tmp_path / "z", progress=False, reparam=fails_later,
                     **dict(TINY, steps=100000))
    assert len(calls) <= fail_at[0] + 1, "the run went on after f raised"
    assert lenlab.load(tmp_path / "z").status == "running"

    def scalar_only(y):
        return float(y[0])

    with pytest.raises(lenlab.UsageError, match="must be vectorized"):
        lenlab.train(out=tmp_path / "y", progress=False, reparam=scalar_only, **TINY)


def test_numpy_values_and_wrong_types_are_taken_or_refused_by_name(tmp_path):
    # NumPy scalars are numbers: the same run as plain ints and floats.
    numpy_run = lenlab.train(out=tmp_path / "np", progress=False,
                             **dict(TINY, steps=np.int64(20), lr=np.float32(1e-3)))
    plain_run = lenlab.train(out=tmp_path / "plain", progress=False,
                             **dict(TINY, steps=20, lr=float(np.float32(1e-3))))
    assert numpy_run.loss["loss"].tolist() == plain_run.loss["loss"].tolist()
    with pytest.raises(lenlab.UsageError, match="setting 'steps' must be a number, a string or "
                                                "a bool, got list"):
        lenlab.train(out=tmp_path / "x", progress=False, **dict(TINY, steps=[5]))
    # Past int: named with its range (2^64 - 1 once passed as -1, found by fuzzing).
    with pytest.raises(lenlab.UsageError, match="'steps' must be an integer from -2147483648 to "
                                                "2147483647, got '18446744073709551615'"):
        lenlab.train(out=tmp_path / "x", progress=False, **dict(TINY, steps=2**64 - 1))
    # Lengths as a number or a list, as the CLI's text; anything else refused by name.
    ev = numpy_run.eval(lengths=5, samples=np.int64(4), out=tmp_path / "e5")
    assert ev.results["length"].tolist() == [5]
    ev = numpy_run.eval(lengths=[2, np.int32(6)], samples=4, out=tmp_path / "e26")
    assert ev.results["length"].tolist() == [2, 6]
    with pytest.raises(lenlab.UsageError, match="lengths must be a text such as"):
        numpy_run.eval(lengths=5.5, out=tmp_path / "bad")
    with pytest.raises(lenlab.UsageError, match="samples must be an integer"):
        numpy_run.eval(samples="many", out=tmp_path / "bad")
    with pytest.raises(lenlab.UsageError, match="setting 'temperature_step' must be a number"):
        numpy_run.eval(temperature="auto-pmax", temperature_step=object(), out=tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


def test_a_reparam_not_finite_on_a_training_batch_says_why_the_run_diverged(tmp_path):
    def nan_in_training(y):  # finite where the domain check looks; NaN in a training batch
        out = np.sqrt(y)
        if len(y) == TINY["batch_size"]:
            out[0] = np.nan
        return out

    with pytest.warns(RuntimeWarning, match=r"training diverged: reparam "
                                            r"'python:nan_in_training' is nan at the training "
                                            r"target y = \d+ \(step 1\)"):
        run = lenlab.train(out=tmp_path / "x", progress=False, reparam=nan_in_training, **TINY)
    assert run.status == "diverged"
    assert "is nan at the training target" in run.error
    with pytest.raises(lenlab.UsageError, match="not completed \\(reparam 'python:nan_in"):
        run.results


def test_a_python_reparam_run_needs_its_function_to_be_evaluated_from_the_cli(tmp_path):
    def twice(y):
        return 2.0 * y

    def half(z):
        return z / 2.0

    run = lenlab.train(out=tmp_path / "run", progress=False, reparam=(twice, half), **TINY)
    r = subprocess.run([LENLAB, "eval", str(run.dir), "--out", str(tmp_path / "e")],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "is a Python function" in r.stderr
    again = lenlab.load(run.dir, reparam=(twice, half))
    assert again.eval(lengths="3", samples=8).results["length"].tolist() == [3.0]


def test_a_cached_run_is_reused_only_for_the_same_function(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # out=None: runs/<run id> here

    def f(y):
        return np.sqrt(y)

    first = lenlab.train(progress=False, reparam=f, **TINY)
    stamp = (first.dir / "manifest.json").stat().st_mtime_ns
    again = lenlab.train(progress=False, reparam=f, **TINY)  # the same cell run again
    assert again.dir == first.dir and (again.dir / "manifest.json").stat().st_mtime_ns == stamp

    def f(y):  # noqa: F811 -- the cell edited: same name, another function
        return np.log(y)

    edited = lenlab.train(progress=False, reparam=f, **TINY)
    assert edited.dir == first.dir  # the run id hashes the name only ...
    assert (edited.dir / "manifest.json").stat().st_mtime_ns != stamp  # ... so it trained again
    log_run = lenlab.train(out=tmp_path / "log", progress=False, reparam="log", **TINY)
    np.testing.assert_allclose(edited.results["mse"], log_run.results["mse"], rtol=1e-6)

    def f(y):  # noqa: F811
        return y * y

    with pytest.raises(lenlab.UsageError, match="trained with other functions named 'python:f'"):
        lenlab.load(first.dir, reparam=f)


BIAS = dict(TINY, pe="bias")


def test_a_python_pe_bias_is_the_expression_it_computes(tmp_path):
    def slope(d, h):  # ALiBi-like, as a NumPy function of the distances and the head index
        return -(h + 1) / 4 * np.log1p(d)

    py = lenlab.train(out=tmp_path / "py", progress=False, pe_bias=slope, **BIAS)
    expr = lenlab.train(out=tmp_path / "expr", progress=False, pe_bias="-(h+1)/4*log(1+d)",
                        **BIAS)
    assert py.config["pe_bias"] == "python:slope"
    assert py.status == expr.status == "completed"
    np.testing.assert_allclose(py.loss["loss"], expr.loss["loss"], rtol=1e-5)
    np.testing.assert_allclose(py.results["mse"], expr.results["mse"], rtol=1e-4)
    bias = lenlab.load(tmp_path / "py").dir / "position_bias.csv"
    assert bias.read_text() == (tmp_path / "expr" / "position_bias.csv").read_text()


def test_a_python_pe_bias_is_checked_and_its_errors_surface(tmp_path):
    def blows_up(d, h):
        return -1.0 / (d - 5)

    with pytest.raises(lenlab.UsageError, match=r"'blows_up' is -?inf at distance d = 5, head h = 0"):
        lenlab.train(out=tmp_path / "a", progress=False, pe_bias=blows_up, **BIAS)

    def raises(d, h):
        raise ZeroDivisionError("the bias broke")

    with pytest.raises(ZeroDivisionError, match="the bias broke"):
        lenlab.train(out=tmp_path / "b", progress=False, pe_bias=raises, **BIAS)

    def scalar(d, h):
        return 0.0

    with pytest.raises(lenlab.UsageError, match="pe_bias function returned 1 values"):
        lenlab.train(out=tmp_path / "c", progress=False, pe_bias=scalar, **BIAS)
    with pytest.raises(lenlab.UsageError, match="pe_bias name '<lambda>'"):
        lenlab.train(out=tmp_path / "d", progress=False, pe_bias=lambda d, h: -d, **BIAS)
    with pytest.raises(lenlab.UsageError, match="pe_bias must be an expression"):
        lenlab.train(out=tmp_path / "e", progress=False, pe_bias=3, **BIAS)


def test_a_python_pe_bias_run_needs_its_function_to_be_evaluated(tmp_path):
    def near(d, h):
        return -0.5 * d

    run = lenlab.train(out=tmp_path / "run", progress=False, pe_bias=near, **BIAS)
    r = subprocess.run([LENLAB, "eval", str(run.dir), "--out", str(tmp_path / "e")],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "no Python position bias named 'near' is registered" in r.stderr
    again = lenlab.load(run.dir, pe_bias=near)
    assert again.eval(lengths="3", samples=8).results["length"].tolist() == [3.0]

    def near(d, h):  # noqa: F811 -- same name, another function
        return -0.25 * d

    with pytest.raises(lenlab.UsageError, match="another pe_bias function named 'python:near'"):
        lenlab.load(run.dir, pe_bias=near)


def test_generate_writes_as_the_cli_does_and_streams_each_token(tmp_path):
    copy = dict(task="copy", n_symbols=4, l_train=4, l_test=6, steps=200, batch_size=16,
                n_layer=1, d_model=16, n_head=2, d_ff=32, pe="rope", eval_samples=8)
    run = lenlab.train(out=tmp_path / "run", progress=False, **copy)
    pieces = []
    text = run.generate("3 1 0 2 SEP", tokens=4, on_token=pieces.append)
    assert "".join(pieces) == text and len(pieces) == 4
    cli = subprocess.run([LENLAB, "generate", str(run.dir), "--prompt", "3 1 0 2 SEP",
                          "--tokens", "4"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == " 3 1 0 2 SEP" + text + "\n"
    # Sampled with a seed: the same tokens again.
    again = [run.generate("1 2 SEP", tokens=3, sample_temperature=1.5, seed=s) for s in (4, 4)]
    assert again[0] == again[1]
    with pytest.raises(lenlab.UsageError, match="'7' at offset 2"):
        run.generate("1 7")
    with pytest.raises(lenlab.UsageError, match="--top-k"):
        run.generate("1", top_k=-1, sample_temperature=1.0)
    # stream=True: the same tokens, one at a time as they are written; leaving early stops the
    # writing (the thread ends), and bad input is raised by the iterator.
    assert list(run.generate("3 1 0 2 SEP", tokens=4, stream=True)) == pieces
    first = run.generate("1 2 SEP", tokens=50, stream=True)
    assert isinstance(next(first), str)
    first.close()
    assert not [t for t in threading.enumerate() if t.name == "lenlab-generate"]
    with pytest.raises(lenlab.UsageError, match="'7' at offset 2"):
        list(run.generate("1 7", stream=True))
    with pytest.raises(lenlab.UsageError, match="not both"):
        run.generate("1", stream=True, on_token=print)


def test_stream_reads_a_text_as_the_cli_does(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join("in the beginning was the word. "[i % 31] for i in range(3000)))
    run = lenlab.train(out=tmp_path / "run", progress=False, task="text", corpus=str(corpus),
                       pe="rope", steps=20, l_train=16, lengths="8,16", eval_samples=4,
                       d_model=16, n_head=2, d_ff=32)
    s = run.stream("all", tokens=300, chunk=100, n_local=8, n_global=1, distance_cap=8)
    assert list(s.chunks["first_position"]) == [1, 101, 201]
    assert s.info["stream"]["characters"] == 300 and s.info["attention"]["n_local"] == 8
    assert len(set(s.chunks["cache_bytes"])) == 1  # the Λ-mask's cache: the same size throughout
    cli = subprocess.run([LENLAB, "eval", str(run.dir), "--stream", "all", "--stream-tokens",
                          "300", "--stream-chunk", "100", "--n-local", "8", "--n-global", "1",
                          "--distance-cap", "8", "--out", str(tmp_path / "cli")],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert list(lenlab.Stream(tmp_path / "cli").chunks["cross_entropy"]) == \
        list(s.chunks["cross_entropy"])
    with pytest.raises(lenlab.UsageError, match="--stream-chunk"):
        run.stream("all", chunk=0)
    with pytest.raises(lenlab.UsageError, match="tokens must be an integer"):
        run.stream("all", tokens=1.5)
