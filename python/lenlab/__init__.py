"""lenlab from Python: train, evaluate and reproduce with lenlab's C++ engine.

Every call fills the settings the CLI takes and runs the same engine, so a run made here is a run
of `lenlab train`: the same folder, files and numbers for the same settings and seed.

    import lenlab
    run = lenlab.train(task="length", pe="rope", l_train=10, l_test=50, steps=500)
    run.results["mse"]            # NumPy arrays, one entry per test length
    run.loss["loss"]              # the training loss per step
    run.parameters["h.0.attn.c_attn.weight"]
    ev = run.eval(lengths="1..100", samples=200)

Settings are the config keys of docs/ (l_train, steps, batch_size, ...). A reparameterization is a
built-in or expression string, as on the CLI, or Python functions over NumPy arrays:
`reparam=(f, f_inv)` (f_inv optional: inverted numerically). So is a fixed positional bias
(pe="bias"): an expression in d and h, or a Python function `pe_bias=b` with b(d, h) over a NumPy
array of distances d and one head index h. Bad settings raise `lenlab.UsageError` with the CLI's
message.
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
import warnings
from pathlib import Path

# The C++ module first: another Python (which may lack NumPy too) is told which Python to use.
try:
    from . import _lenlab
except ImportError as error:  # built for another Python, or not built: say which and what to do
    from ._import_error import explained
    raise explained(error) from error

import numpy as np  # noqa: E402
from ._settings import (depths_text, lengths_text, setting_value, settings_json_ready,
                        test_time_settings)
from ._token_stream import token_stream
from ._functions import (_FINGERPRINT_FILE, _bias_fingerprint, _fingerprint,
                         _functions_fingerprint, _pe_bias_setting, _recorded_fingerprints,
                         _reparam_setting, _same_functions)

__all__ = ["__version__", "UsageError", "Run", "Evaluation", "Stream", "Experiment", "train",
           "load", "reproduce", "compare"]

__version__ = _lenlab.__version__  # CMakeLists.txt's project VERSION, as `lenlab --version`
UsageError = _lenlab.UsageError


# ---- reading the CLI's files ------------------------------------------------------------------


def _read_csv(path: Path, text: tuple = ()) -> dict:
    """A CSV of numbers as {column: float64 array}; empty cells are NaN, text columns stay text,
    and so do the columns named in `text` (a bit string "0110" is not the number 110)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return {}
    header, body = rows[0], rows[1:]
    out = {}
    for i, name in enumerate(header):
        cells = [r[i] if i < len(r) else "" for r in body]
        if name in text:
            out[name] = np.array(cells, dtype=object)
            continue
        try:
            out[name] = np.array([float(c) if c != "" else math.nan for c in cells])
        except ValueError:
            out[name] = np.array(cells, dtype=object)
    return out


def _pandas(table: dict):
    try:
        import pandas
    except ImportError as e:  # pandas is optional
        raise ImportError("to_pandas needs pandas (Debian: python3-pandas)") from e
    return pandas.DataFrame(table)


# ---- progress --------------------------------------------------------------------------------


class _Progress:
    """A bar over the engine's work: tqdm's (terminal or notebook) when installed, else a line."""

    def __init__(self, label: str, enabled: bool):
        self.bar = None
        self.label = label
        self.enabled = enabled
        self.last = -1
        if not enabled:
            return
        style = dict(total=1000, desc=label, leave=False,
                     bar_format="{desc} {percentage:3.0f}%|{bar}| {elapsed}<{remaining}")
        try:
            from tqdm.auto import tqdm
            try:
                self.bar = tqdm(**style)
            except Exception:  # a notebook without ipywidgets: tqdm's text bar
                from tqdm.std import tqdm as text_tqdm
                self.bar = text_tqdm(**style)
        except ImportError:
            self.bar = None

    def __call__(self, fraction: float) -> None:
        if not self.enabled:
            return
        n = int(fraction * 1000)
        if self.bar is not None:
            self.bar.update(max(0, n - self.bar.n))
        elif n // 100 != self.last:
            self.last = n // 100
            print(f"\r{self.label} {n // 10:3d}%", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled and self.last >= 0:
            print(file=sys.stderr)


# ---- runs ------------------------------------------------------------------------------------


def _version_tuple(text: str) -> tuple:
    """"0.1.0" -> (0, 1, 0): each dot-separated part's leading digits ("2rc1" -> 2, none -> 0)."""
    return tuple(int(m.group()) if (m := re.match(r"\d+", part)) else 0
                 for part in str(text).split("."))


def _check_written_by(directory: Path, manifest: dict) -> None:
    """A folder a newer lenlab wrote may hold files or settings this one reads wrongly: refused,
    saying which versions and what to do."""
    written = manifest.get("lenlab_version", "")
    if written and _version_tuple(written) > _version_tuple(__version__):
        raise UsageError(f"{directory} was written by lenlab {written}, newer than this lenlab "
                         f"{__version__}: update lenlab (pip install --upgrade, or rebuild from a "
                         "newer checkout) to read it")


class Run:
    """A run's folder, as `lenlab train` writes it, read into NumPy arrays."""

    def __init__(self, directory):
        self.dir = Path(directory)
        manifest = self.dir / "manifest.json"
        if not manifest.is_file():
            raise UsageError(f"{self.dir} holds no run (no manifest.json); give a folder that "
                             "lenlab train (or lenlab.train) wrote")
        self.manifest = json.loads(manifest.read_text())
        _check_written_by(self.dir, self.manifest)
        self.config = dict(self.manifest.get("config", {}))
        self._parameters = None

    @property
    def status(self) -> str:
        """"completed", "diverged", or "running" (a run that was stopped)."""
        return self.manifest.get("status", "")

    @property
    def error(self) -> str:
        """Why the run did not complete, as its manifest says ("" for a completed run): a diverged
        run's step and cause, e.g. a reparam that is not finite at a training target."""
        return self.manifest.get("error", "")

    @property
    def loss(self) -> dict:
        """loss.csv: step, lr, loss, grad_norm, ... as arrays."""
        return _read_csv(self.dir / "loss.csv")

    @property
    def results(self) -> dict:
        """results.csv: one entry per test length (and passkey depth), as arrays."""
        if self.status != "completed":
            why = f" ({self.error})" if self.error else ""
            raise UsageError(f"{self.dir}: the run is {self.status!r}, not completed{why}: it has "
                             "no results")
        return _read_csv(self.dir / "results.csv")

    @property
    def parameters(self) -> dict:
        """The trained weights by their GPT-2-style names, float32 arrays (model.safetensors)."""
        if self._parameters is None:
            self._parameters = _lenlab.load_parameters(str(self.dir / "model.safetensors"))
        return self._parameters

    def to_torch(self, dtype=None):
        """The trained model as a torch.nn.Module (lenlab.torch.Transformer): lenlab's forward in
        PyTorch, its parameters under the checkpoint's names, hook points at each layer's attention
        and residual stream (docs/python.md). In the run's precision unless dtype is given
        (torch.float64, ...). Needs PyTorch, imported only here."""
        from . import torch as lenlab_torch

        return lenlab_torch.from_run(self, dtype)

    def to_pandas(self, table: str = "results"):
        """results.csv (or table="loss": loss.csv) as a pandas DataFrame."""
        if table not in ("results", "loss"):
            raise UsageError(f"table must be 'results' or 'loss', got {table!r}")
        return _pandas(self.results if table == "results" else self.loss)

    def eval(self, lengths: str | None = None, samples: int = 0, depths: str | None = None,
             out=None, predictions: bool = True, overwrite: bool = False,
             device: str = "auto", representation_stats: bool = False,
             representation_projections: int = 64, **attention) -> "Evaluation":
        """`lenlab eval` of this run: other test lengths, more samples, a test-time method
        (n_local, n_global, distance_cap, temperature, temperature_min, temperature_step,
        temperature_scope, attention_stats, decode, rope_scaling, rope_factor, yarn_alpha,
        yarn_beta), paper 004's measurement (representation_stats, with
        representation_projections directions: the Evaluation's `representation`). Written to `out` (default: DIR/eval-<n>); returns its
        arrays."""
        if out is None:
            n = 1
            while (self.dir / f"eval-{n}").exists():
                n += 1
            out = self.dir / f"eval-{n}"
        attention = test_time_settings(attention)
        attention = settings_json_ready(attention)
        samples = setting_value("samples", samples)
        if not isinstance(samples, int) or isinstance(samples, bool):
            raise UsageError(f"samples must be an integer (0: the run's eval_samples), got "
                             f"{samples!r}")
        _lenlab.evaluate(str(self.dir), str(out), lengths_text(lengths), depths_text(depths),
                         samples,
                         bool(predictions), bool(overwrite), device, json.dumps(attention),
                         _command_line("eval", dict(lengths=lengths, samples=samples,
                                                    representation_stats=representation_stats,
                                                    **attention)),
                         bool(representation_stats), int(representation_projections))
        return Evaluation(out)

    def stream(self, source: str = "test", tokens: int = 0, chunk: int = 4096, out=None,
               overwrite: bool = False, device: str = "auto", **attention) -> "Stream":
        """`lenlab eval --stream` of a text run: the text `source` (test, validation, training:
        a split of the run's corpus; all: the whole corpus; or a file's path) read in one pass
        through the key-value cache, at most `tokens` characters (0: all), the cross-entropy per
        `chunk` positions, with eval's test-time attention as keywords (n_local, n_global,
        distance_cap, ...). Written to `out` (default: DIR/stream-<n>); returns its arrays."""
        for name, value in (("tokens", tokens), ("chunk", chunk)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise UsageError(f"{name} must be an integer, got {value!r}")
        if out is None:
            n = 1
            while (self.dir / f"stream-{n}").exists():
                n += 1
            out = self.dir / f"stream-{n}"
        attention = settings_json_ready(test_time_settings(attention))
        _lenlab.stream(str(self.dir), str(out), str(source), tokens, chunk, bool(overwrite),
                       device, json.dumps(attention),
                       _command_line("stream", dict(source=source, tokens=tokens, chunk=chunk,
                                                    **attention)))
        return Stream(out)

    def generate(self, prompt: str, tokens: int = 100, sample_temperature: float = 0.0,
                 top_k: int = 0, top_p: float = 1.0, seed: int = 0, device: str = "auto",
                 on_token=None, stream: bool = False, **attention):
        """`lenlab generate` of this run: the text it writes after `prompt` (a text run's
        characters, or a token task's symbols separated by spaces), greedy unless
        sample_temperature > 0 (with top_k, top_p and seed), with the test-time attention of
        `eval` (a fixed temperature). on_token, if given, is called with each token's text as it
        is written; the whole text is returned. stream=True returns instead an iterator over the
        tokens' texts, each as it is written (`for piece in run.generate(p, stream=True)`);
        leaving it early stops the writing, and bad input is raised by its first step."""
        attention = settings_json_ready(test_time_settings(attention))
        for name, value in (("tokens", tokens), ("top_k", top_k), ("seed", seed)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise UsageError(f"{name} must be an integer, got {value!r}")
        if on_token is not None and not callable(on_token):
            raise UsageError(f"on_token must be a function of one string, got {on_token!r}")
        if stream and on_token is not None:
            raise UsageError("give on_token or stream=True, not both: the stream yields each token")

        def write(callback):
            return _lenlab.generate(str(self.dir), str(prompt), tokens, float(sample_temperature),
                                    top_k, float(top_p), seed, device, json.dumps(attention),
                                    callback)

        return token_stream(write) if stream else write(on_token)

    def __repr__(self) -> str:
        return f"lenlab.Run({str(self.dir)!r}, status={self.status!r})"


class Stream:
    """A stream's folder (`lenlab eval --stream`): `chunks`, stream.csv as arrays (first_position,
    last_position, tokens, cross_entropy, bits_per_character, perplexity, seconds,
    tokens_per_second, cache_bytes, resident_bytes), and `info`, stream.json."""

    def __init__(self, directory):
        self.dir = Path(directory)
        self.info = json.loads((self.dir / "stream.json").read_text())
        self.chunks = _read_csv(self.dir / "stream.csv")

    def to_pandas(self):
        return _pandas(self.chunks)

    def __repr__(self) -> str:
        return f"lenlab.Stream({str(self.dir)!r})"


class Evaluation:
    """An evaluation's folder (`lenlab eval --out`): results and predictions as arrays."""

    def __init__(self, directory):
        self.dir = Path(directory)
        self.info = json.loads((self.dir / "eval.json").read_text())
        self.results = _read_csv(self.dir / "results.csv")
        p = self.dir / "predictions.csv"
        # The inputs (bit strings) and the token lists stay text, whatever their digits.
        self.predictions = _read_csv(p, text=("input", "tokens", "labels", "p_label",
                                              "argmax")) if p.is_file() else {}
        r = self.dir / "representation.csv"  # with representation_stats
        self.representation = _read_csv(r) if r.is_file() else {}

    def to_pandas(self, table: str = "results"):
        tables = {"results": self.results, "predictions": self.predictions,
                  "representation": self.representation}
        if table not in tables:
            raise UsageError(f"table must be 'results', 'predictions' or 'representation', "
                             f"got {table!r}")
        return _pandas(tables[table])

    def __repr__(self) -> str:
        return f"lenlab.Evaluation({str(self.dir)!r})"


def _command_line(what: str, settings: dict) -> str:
    """What manifests record as the command: the Python call, in words."""
    shown = ", ".join(f"{k}={v!r}" for k, v in settings.items() if v is not None)
    return f"python: lenlab.{what}({shown})"


def train(*, out=None, overwrite: bool = False, device: str = "auto", progress: bool = True,
          reparam="identity", reparam_name: str | None = None, pe_bias=None,
          pe_bias_name: str | None = None, **settings) -> Run:
    """Train and evaluate one run, as `lenlab train` does, and return it.

    settings: config keys (task, pe, l_train, l_test, steps, batch_size, seed, ...). reparam: a
    built-in or an expression, or Python functions over NumPy arrays, f or (f, f_inv); their name
    (reparam_name, else the function's) is recorded as reparam "python:NAME". pe_bias (with
    pe="bias"): an expression in d and h, or a Python function b(d, h) of a NumPy array of
    distances and a head index, recorded as "python:NAME" likewise. out: the run's folder
    (default: runs/<run id> under the current directory, and a completed run already there is
    returned as it is; any other existing folder is refused unless overwrite). A run that
    diverges returns with status "diverged". Ctrl-C stops it (KeyboardInterrupt), keeping its
    folder as a killed run ("running")."""
    settings = dict(settings)
    settings["reparam"] = _reparam_setting(reparam, reparam_name)
    bias_setting = _pe_bias_setting(pe_bias, pe_bias_name)
    if bias_setting is not None:
        settings["pe_bias"] = bias_setting
    n_head = int(settings.get("n_head", 4))
    text = json.dumps(settings_json_ready(settings))
    python_functions = not isinstance(reparam, str) or callable(pe_bias)
    if out is None:
        # runs/<run id>: the id hashes every setting, so a completed run there is this very run
        # (a notebook cell run again loads it instead of training it twice) -- for Python
        # functions only when they compute what they computed then; else it is trained again.
        out = Path("runs") / _lenlab.run_id(text)
        if (out / "manifest.json").is_file() and Run(out).status == "completed":
            if not python_functions or _same_functions(out, reparam, pe_bias, n_head):
                if not overwrite:
                    return Run(out)
            else:
                overwrite = True  # the same name, another function: that old run is not this one
    bar = _Progress(f"training {Path(out).name}", progress)
    try:
        _lenlab.train(text, str(out), bool(overwrite), device, bar,
                      _command_line("train", settings))
    finally:
        bar.close()
    if python_functions:
        (Path(out) / _FINGERPRINT_FILE).write_text(
            _functions_fingerprint(reparam, pe_bias, n_head))
    run = Run(out)
    if run.status == "diverged":  # returned, not raised (a sweep's diverged runs are data): say why
        warnings.warn(f"{run.dir}: training diverged: {run.error}", RuntimeWarning, stacklevel=2)
    return run


def load(run_dir, reparam=None, reparam_name: str | None = None, pe_bias=None,
         pe_bias_name: str | None = None) -> Run:
    """A run's folder. A run trained with Python functions (a reparam, a pe_bias) needs them again
    to be evaluated: pass the same ones (and reparam_name or pe_bias_name, if they had one)."""
    run = Run(run_dir)
    recorded = _recorded_fingerprints(run.dir)
    if reparam is not None:
        setting = _reparam_setting(reparam, reparam_name)
        if setting != run.config.get("reparam", "identity"):
            raise UsageError(f"{run.dir} was trained with reparam "
                             f"{run.config.get('reparam', 'identity')!r}, not {setting!r}")
        if not isinstance(reparam, str) and recorded is not None and \
                recorded[0] != _fingerprint(reparam):
            raise UsageError(f"{run.dir} was trained with other functions named {setting!r}: "
                             "they differ from the ones given at some y; pass the ones it was "
                             "trained with")
    if pe_bias is not None:
        setting = _pe_bias_setting(pe_bias, pe_bias_name)
        if setting != run.config.get("pe_bias", ""):
            raise UsageError(f"{run.dir} was trained with pe_bias "
                             f"{run.config.get('pe_bias', '')!r}, not {setting!r}")
        n_head = int(run.config.get("n_head", 4))
        if callable(pe_bias) and recorded is not None and \
                recorded[1] != _bias_fingerprint(pe_bias, n_head):
            raise UsageError(f"{run.dir} was trained with another pe_bias function named "
                             f"{setting!r}: it differs from the one given at some distance or "
                             "head; pass the one it was trained with")
    return run


class Experiment:
    """An experiment folder (`lenlab reproduce --out`): report.md, figures, results.csv."""

    def __init__(self, directory):
        self.dir = Path(directory)
        report = self.dir / "report.md"
        self.report = report.read_text() if report.is_file() else ""
        self.figures = sorted(self.dir.glob("fig*.png"))
        table = self.dir / "results.csv"
        self.results = _read_csv(table) if table.is_file() else {}

    def runs(self) -> list:
        return [Run(d) for d in sorted((self.dir / "runs").iterdir()) if d.is_dir()]

    def to_pandas(self):
        return _pandas(self.results)

    def compare(self):
        """lenlab.compare(self.dir): the method comparisons of report.md, a row per line."""
        return compare(self.dir)

    def __repr__(self) -> str:
        return f"lenlab.Experiment({str(self.dir)!r})"


_COMPARE_TEXT = {"figure", "task", "pe", "metric", "range", "method", "baseline", "verdict",
                 "reason", "seeds_not_fit", "in_range_rule"}


def compare(folder):
    """The method comparisons of an experiment folder, judged as its report.md judges them (the
    paired tests of every figure with a baseline, Holm-adjusted together): one row per (figure,
    test range, line), as a pandas DataFrame, or a dict of columns (NumPy arrays) without pandas.
    Columns: figure, task, pe, metric, range (its label), lo, hi (multiples of l_train), main
    (report.md's verdicts: every length beyond l_train), method, baseline, is_baseline, n_seeds,
    mean, min, max, rank, seeds_better, seeds_paired, mean_difference, interval_low,
    interval_high, median_difference, p_sign, p_wilcoxon, p_adjusted, smallest_detectable,
    verdict ("helps", "hurts", "no detectable difference", "not judged"; "baseline" on the
    baseline's own row), reason (why not judged), seeds_not_fit ("2, 5": the line's seeds whose
    run did not fit its training range, left out of the test; "" when none) and in_range_rule
    (the gate's rule). Numbers a row lacks are NaN."""
    columns = _lenlab.compare(str(Path(folder)))
    table = {name: np.array(values, dtype=object) if name in _COMPARE_TEXT else np.array(values)
             for name, values in columns.items()}
    try:
        import pandas
    except ImportError:  # pandas is optional: the columns as arrays
        return table
    return pandas.DataFrame(table)


def reproduce(config=None, out=None, figures=None, seeds: int = 0, jobs: int = 1,
              device: str = "auto", dry_run: bool = False, progress: bool = True,
              seeds_until_decided: int = 0):
    """`lenlab reproduce`: the paper's figures (config=None) or a config file's, into `out`.
    figures: names or groups (a list or "1a,1c"); seeds: run seeds 1..N instead of the config's;
    seeds_until_decided: `--seeds-until-decided MAX` (0: the config's seeds_until_decided).
    Runs already in `out` are kept, so a stopped reproduction resumes (Ctrl-C stops one: the runs
    finished are kept). dry_run prints the plan."""
    if config is None:
        text, source = _lenlab.paper_config(), "configs/paper.toml (built in)"
    else:
        path = Path(config)
        if not path.is_file():
            raise UsageError(f"config {config!s}: no such file")
        text, source = path.read_text(), str(path)
    if isinstance(figures, str):
        figures = [f for f in figures.split(",") if f]
    if out is None and not dry_run:
        raise UsageError("reproduce needs out=, the experiment folder")
    bar = _Progress("runs", progress and not dry_run)
    try:
        _lenlab.reproduce(text, source, str(out or ""), list(figures or []), int(seeds),
                          int(jobs), device, bool(dry_run), bar, int(seeds_until_decided))
    finally:
        bar.close()
    return None if dry_run else Experiment(out)
