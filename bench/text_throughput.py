#!/usr/bin/env python3
"""Training throughput, in tokens per second, of lenlab against its PyTorch peer of the same size.

The model has a character-level language model's shape: token task `markov` (every row of
[BOS] x1..xL answers the next token) with 76 symbols, d_model 128, 4 layers, 4 heads, d_ff 512,
RoPE, float32, batch 32 of fixed-length windows of 128 tokens (all sizes are flags). It measures:

- lenlab (`lenlab train`, --threads 1 and --threads 2): the manifest's train_seconds, the
  training loop alone (batch generation included, evaluation excluded); the threads-1 run also
  writes the initial weights and the batches (--save-init, --save-batches);
- PyTorch (tools/torch_reference's model and trainer, AdamW, torch.set_num_threads(1)): the same
  model from the same initial weights on the same batches, timed with time.perf_counter over the
  steps after --torch-warmup warm-up steps, once per OpenBLAS kernel (OPENBLAS_CORETYPE unset,
  Haswell, SkylakeX, Zen; each in its own process, as OpenBLAS picks its kernel when it loads).

tokens/s = the tokens of the timed steps' batches (BOS included) / their seconds. Run from the
repository root (Debian's python3-torch; under another python3 the script re-runs itself with
/usr/bin/python3):

    python3 bench/text_throughput.py [--steps 40] [--csv out.csv] [--lenlab PATH] [-- LENLAB FLAGS]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORETYPES = [None, "Haswell", "SkylakeX", "Zen"]  # None: OPENBLAS_CORETYPE unset

try:
    import torch
except ImportError:  # a python3 without Debian's torch (e.g. pyenv's): use the system's
    if Path("/usr/bin/python3").is_file() and sys.executable != "/usr/bin/python3":
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    raise

sys.path.insert(0, str(REPO / "tools"))
from torch_reference.cli import lenlab_binary  # noqa: E402
from torch_reference.files import read_batches, read_manifest, read_safetensors  # noqa: E402
from lenlab.torch import ModelConfig  # noqa: E402
from torch_reference.trainer import OptimizerSettings, to_parameters, train  # noqa: E402


def openblas_core() -> str:
    """The kernel OpenBLAS chose in this process (openblas_get_corename), or '?'."""
    import ctypes
    try:
        get = ctypes.CDLL("libblas.so.3").openblas_get_corename
        get.restype = ctypes.c_char_p
        return get().decode()
    except (OSError, AttributeError):
        return "?"


def torch_worker(run: Path, warmup: int) -> None:
    """Trains the run's model in PyTorch on its saved batches; prints one JSON line of timings."""
    torch.set_num_threads(1)
    manifest = read_manifest(run)
    config = manifest["config"]
    init = read_safetensors(Path(manifest["init_checkpoint"]))
    batches = list(read_batches(Path(manifest["batch_log"])))  # parsed before the clock starts
    if warmup >= len(batches):
        raise SystemExit(f"--torch-warmup {warmup} leaves none of {len(batches)} steps to time")
    dtype = torch.float64 if config.get("precision") == "float64" else torch.float32
    marks = []

    def timed():  # the clock starts when the first timed step asks for its batch
        for i, step in enumerate(batches):
            if i == warmup:
                marks.append(time.perf_counter())
            yield step
    train(ModelConfig.from_run(config, init), to_parameters(init, dtype), timed(), len(batches),
          OptimizerSettings.from_run(config))
    seconds = time.perf_counter() - marks[0]
    print(json.dumps({"steps": len(batches) - warmup, "seconds": seconds, "core": openblas_core(),
                      "tokens": sum(len(b["tokens"]) for b in batches[warmup:])}))


def run_lenlab(binary: str, flags: list[str], threads: int, out: Path, save: bool) -> dict:
    """`lenlab train FLAGS --threads N` into `out`: its steps and training seconds."""
    cmd = [binary, "train", *flags, "--threads", str(threads), "--out", str(out), "--overwrite"]
    if save:
        cmd += ["--save-init", str(out.parent / "init.safetensors"),
                "--save-batches", str(out.parent / "batches.jsonl")]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"lenlab train failed ({done.returncode}): {' '.join(cmd)}\n"
                         f"{done.stderr[-3000:]}")
    m = read_manifest(out)
    if "train_seconds" in m:
        return {"steps": int(m["config"]["steps"]), "seconds": float(m["train_seconds"]),
                "timed": "train_seconds", "manifest": m}
    return {"steps": int(m["config"]["steps"]), "seconds": wall, "timed": "whole command",
            "manifest": m}


def run_torch(run: Path, coretype: str | None, warmup: int) -> dict | None:
    """A worker process with OPENBLAS_CORETYPE set (or unset); None when it fails."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    cmd = [sys.executable, str(Path(__file__).resolve()), "--torch-worker", str(run),
           "--torch-warmup", str(warmup)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        rc = done.returncode
        why = signal.Signals(-rc).name if rc < 0 else f"exit status {rc}"
        print(f"PyTorch with OPENBLAS_CORETYPE={coretype}: failed ({why}), skipped "
              f"{done.stderr.strip()[-200:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def machine() -> str:
    """The CPU's model name and the cores this process may use."""
    name = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            name = line.split(":", 1)[1].strip()
            break
    return f"{name}, {len(os.sched_getaffinity(0))} cores"


def parse(argv: list[str]) -> argparse.Namespace:
    """The script's flags; lenlab train's extra flags go after --."""
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--lenlab", help="the lenlab binary (default: $LENLAB_BINARY, then "
                   "build/release/lenlab)")
    p.add_argument("--task", default="markov")
    p.add_argument("--n-symbols", type=int, default=76, help="0: not passed (a task with its "
                   "own vocabulary)")
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--d-ff", type=int, default=512)
    p.add_argument("--l-train", type=int, default=128)
    p.add_argument("--l-train-min", type=int, help="shortest training sequence (default: "
                   "--l-train, fixed windows as a text model trains on; 0: the task's shortest)")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--pe", default="rope")
    p.add_argument("--precision", default="float32")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--torch-warmup", type=int, default=3, help="PyTorch steps not timed")
    p.add_argument("--csv", help="also write the table's rows here")
    p.add_argument("--work", help="keep the runs here (default: a temporary folder)")
    p.add_argument("--torch-worker", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.extra = extra
    return a


def main(argv: list[str]) -> int:
    """Runs both engines and prints (and with --csv writes) the table."""
    a = parse(argv)
    if a.torch_worker:
        torch_worker(Path(a.torch_worker), a.torch_warmup)
        return 0
    binary = lenlab_binary(a.lenlab)
    l_min = a.l_train if a.l_train_min is None else a.l_train_min
    flags = ["--task", a.task, "--d-model", str(a.d_model), "--n-layer", str(a.n_layer),
             "--n-head", str(a.n_head), "--d-ff", str(a.d_ff), "--l-train", str(a.l_train),
             "--l-train-min", str(l_min), "--batch", str(a.batch), "--pe", a.pe,
             "--precision", a.precision, "--steps", str(a.steps),
             "--lengths", str(a.l_train), "--eval-samples", "1"]  # evaluation: next to nothing
    flags += ["--n-symbols", str(a.n_symbols)] if a.n_symbols > 0 else []
    given = {f.split("=")[0] for f in a.extra if f.startswith("--")}  # lenlab refuses a repeat
    flags = [x for k, v in zip(flags[::2], flags[1::2]) if k not in given for x in (k, v)]
    flags += a.extra
    tmp = None if a.work else tempfile.TemporaryDirectory(prefix="text_throughput.")
    work = Path(a.work or tmp.name)
    work.mkdir(parents=True, exist_ok=True)

    print(f"machine: {machine()}; PyTorch {torch.__version__}; lenlab {binary}")
    print(f"shape: lenlab train {' '.join(flags)}")
    rows = []
    for threads in (1, 2):
        r = run_lenlab(binary, flags, threads, work / f"lenlab-t{threads}", save=threads == 1)
        rows.append(["lenlab", threads, r["timed"] + (", writing batches" if threads == 1 else ""),
                     r["steps"], r["seconds"], None])
    m = read_manifest(work / "lenlab-t1")
    print(f"lenlab {m.get('lenlab_version', '?')} at {m.get('git_revision', '?')}, "
          f"{m.get('derived', {}).get('n_parameters', '?')} parameters")
    tokens = [len(b["tokens"]) for b in read_batches(work / "batches.jsonl")]
    for row in rows:
        row[5] = sum(tokens)
    for coretype in CORETYPES:
        r = run_torch(work / "lenlab-t1", coretype, a.torch_warmup)
        if r:
            label = f"{coretype or 'default'} (OpenBLAS {r['core']})"
            rows.append(["PyTorch", 1, label, r["steps"], r["seconds"], r["tokens"]])

    torch_rows = [r for r in rows if r[0] == "PyTorch"]
    best = max((r[5] / r[4] for r in torch_rows), default=None)
    header = ["engine", "threads", "setting", "steps", "seconds", "tokens", "tokens/s",
              "vs PyTorch best"]
    table = [[e, t, s, n, f"{sec:.3f}", tok, f"{tok / sec:.0f}",
              f"{tok / sec / best:.2f}x" if best else "-"] for e, t, s, n, sec, tok in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *table)]
    for line in [header, *table]:
        print("  ".join(str(x).ljust(w) if i == 2 or i == 0 else str(x).rjust(w)
                        for i, (x, w) in enumerate(zip(line, widths))))
    if best:
        fastest = max(torch_rows, key=lambda r: r[5] / r[4])
        print(f"lenlab (1 thread) / PyTorch best (1 thread, {fastest[2]}): "
              f"{rows[0][5] / rows[0][4] / best:.2f}x")
    print(f"timed: lenlab, every step (train_seconds: the training loop with its batch "
          f"generation, no evaluation); PyTorch, the steps after the first {a.torch_warmup}")
    if a.csv:  # the same rows, numbers unrounded
        with open(a.csv, "w", newline="") as f:
            csv.writer(f).writerows([["engine", "threads", "setting", "steps", "seconds", "tokens",
                                      "tokens_per_s", "vs_torch_best"],
                                     *[[*r, r[5] / r[4], r[5] / r[4] / best if best else ""]
                                       for r in rows]])
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
