"""A lenlab run trained again in PyTorch from the same initial weights on the same batches, and the
two compared step by step: loss, gradient norm and learning rate per step, and the final weights.

The run must have been trained with --save-init and --save-batches (its manifest names both
files). Its precision decides PyTorch's dtype (float64 runs: float64), unless one is given.
"""

from __future__ import annotations

import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .files import (read_batches, read_loss_csv, read_manifest, read_safetensors,
                    write_safetensors)
from lenlab.torch import ModelConfig
from .trainer import OptimizerSettings, TrainLog, to_parameters, train


def relative(a, b) -> np.ndarray:
    """|a - b| / |a| elementwise (0 where both are 0)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = np.abs(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.abs(a - b) / scale
    r[(scale == 0) & (a == b)] = 0.0
    return r


@dataclass
class Retrained:
    log: TrainLog
    params: dict[str, torch.Tensor]
    dtype: torch.dtype
    steps: int


def run_files(run_dir: Path) -> tuple[dict, Path, Path]:
    """The run's config and the paths of its initial weights and batch log."""
    manifest = read_manifest(run_dir)
    missing = [k for k in ("init_checkpoint", "batch_log") if k not in manifest]
    if missing:
        raise SystemExit(f"{run_dir}: the run was not trained with --save-init and --save-batches "
                         f"(its manifest has no {' or '.join(missing)}); train it again with both")
    return manifest["config"], Path(manifest["init_checkpoint"]), Path(manifest["batch_log"])


def perturbed(init: dict[str, np.ndarray], ulps: float = 1.0, seed: int = 0):
    """Every initial weight moved by `ulps` units in its last place, in a random direction: the
    control that shows how far the training dynamics carry a rounding-sized difference."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, a in init.items():
        step = np.spacing(np.abs(a).astype(a.dtype)) * ulps
        out[name] = a + rng.choice([-1.0, 1.0], size=a.shape).astype(a.dtype) * step
    return out


def retrain(run_dir: Path, steps: int | None = None, dtype: torch.dtype | None = None,
            perturb: bool = False) -> Retrained:
    """The run trained again in PyTorch: its first `steps` steps (all by default); with
    `perturb`, from initial weights one ulp off (perturbed())."""
    config, init_path, batches_path = run_files(run_dir)
    init = read_safetensors(init_path)
    if perturb:
        init = perturbed(init)
    if dtype is None:
        dtype = torch.float64 if config.get("precision") == "float64" else torch.float32
    total = int(config["steps"])
    steps = total if steps is None else min(steps, total)
    params = to_parameters(init, dtype)
    log = train(ModelConfig.from_run(config, init), params,
                itertools.islice(read_batches(batches_path), steps), total,
                OptimizerSettings.from_run(config))
    return Retrained(log, params, dtype, steps)


def write_run(run: Path, out: Path, r, trained_by: str) -> None:
    """PyTorch's trained weights `r` (a Retrained) as a run folder that `lenlab eval` reads: the
    model, its loss.csv and `run`'s manifest, marked as trained by `trained_by`."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(run)
    tensors = {n: p.detach().numpy() for n, p in r.params.items()}
    write_safetensors(out / "model.safetensors", tensors,
                      {"format": "lenlab", "config": json.dumps(manifest["config"]),
                       "trained_by": f"tools/torch_reference, PyTorch {torch.__version__}"})
    with open(out / "loss.csv", "w") as f:
        f.write("step,lr,loss,grad_norm\n")
        for i, (lr, loss, g) in enumerate(zip(r.log.lr, r.log.loss, r.log.grad_norm)):
            f.write(f"{i + 1},{lr!r},{loss!r},{g!r}\n")
    manifest.update(command_line=" ".join(sys.argv), trained_by=trained_by,
                    device=f"PyTorch {torch.__version__} ({r.dtype})".replace("torch.", ""),
                    files=["manifest.json", "loss.csv", "model.safetensors"])
    for stale in ("init_checkpoint", "batch_log"):
        manifest.pop(stale, None)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


@dataclass
class Comparison:
    steps: np.ndarray
    lenlab: dict[str, np.ndarray]    # loss.csv's columns, the compared steps
    torch: TrainLog
    loss: np.ndarray                 # relative differences per step
    grad_norm: np.ndarray
    lr: np.ndarray
    weights: dict[str, float] | None  # per tensor: max |dw| / max |w|, when the whole run was
    # The control (control=True): PyTorch against itself, the relative loss difference per step
    # between its run and the same run in float64 (a float32 run) or from initial weights one ulp
    # off (a float64 run). It measures how far the dynamics carry a rounding-sized difference.
    control: np.ndarray | None = None
    control_label: str = ""
    # The control's relative gradient-norm difference per step, likewise: the gradient norm can
    # carry a difference further than the loss does.
    control_grad_norm: np.ndarray | None = None

    def worst(self, values: np.ndarray) -> tuple[float, int]:
        i = int(np.nanargmax(values))
        return float(values[i]), int(self.steps[i])


def compare(run_dir: Path, steps: int | None = None, dtype: torch.dtype | None = None,
            control: bool = False) -> Comparison:
    run_dir = Path(run_dir)
    ours = retrain(run_dir, steps, dtype)
    lenlab = read_loss_csv(run_dir)
    n = min(ours.steps, len(lenlab["step"]))
    lenlab = {k: v[:n] for k, v in lenlab.items()}
    weights = None
    config, _, _ = run_files(run_dir)
    if n == int(config["steps"]):
        final = read_safetensors(run_dir / "model.safetensors")
        weights = {name: float(np.max(np.abs(final[name].astype(np.float64) -
                                             p.detach().numpy().astype(np.float64))) /
                   max(float(np.max(np.abs(final[name]))), 1e-300))
                   for name, p in ours.params.items()}
    drift, grad_drift, label = None, None, ""
    if control:
        other = (retrain(run_dir, steps, torch.float64) if ours.dtype == torch.float32
                 else retrain(run_dir, steps, ours.dtype, perturb=True))
        label = ("PyTorch float32 vs float64" if ours.dtype == torch.float32
                 else "PyTorch vs 1-ulp init")
        drift = relative(ours.log.loss[:n], other.log.loss[:n])
        grad_drift = relative(ours.log.grad_norm[:n], other.log.grad_norm[:n])
    return Comparison(steps=lenlab["step"].astype(int), lenlab=lenlab, torch=ours.log,
                      loss=relative(lenlab["loss"], ours.log.loss[:n]),
                      grad_norm=relative(lenlab["grad_norm"], ours.log.grad_norm[:n]),
                      lr=relative(lenlab["lr"], ours.log.lr[:n]), weights=weights, control=drift,
                      control_label=label, control_grad_norm=grad_drift)


def report(c: Comparison, label: str) -> str:
    """A few lines for a terminal: the per-step differences at a few steps and their maxima."""
    lines = [f"{label}: {len(c.steps)} steps",
             f"  {'step':>6} {'loss (lenlab)':>22} {'loss (torch)':>22} {'rel. loss':>10} "
             f"{'rel. |g|':>10}" + (f" {'control':>10}" if c.control is not None else "")]
    shown = sorted({0, 1, 9, 49, 99, 199, 499, 999, len(c.steps) - 1} & set(range(len(c.steps))))
    for i in shown:
        line = (f"  {c.steps[i]:>6} {c.lenlab['loss'][i]:>22.17g} {c.torch.loss[i]:>22.17g} "
                f"{c.loss[i]:>10.2e} {c.grad_norm[i]:>10.2e}")
        if c.control is not None:
            line += f" {c.control[i]:>10.2e}"
        lines.append(line)
    for name, values in (("loss", c.loss), ("gradient norm", c.grad_norm), ("lr", c.lr)):
        worst, at = c.worst(values)
        lines.append(f"  largest relative difference in {name}: {worst:.3g} (step {at})")
    if c.control is not None:
        worst, at = c.worst(c.control)
        lines.append(f"  control ({c.control_label}), largest relative loss difference: "
                     f"{worst:.3g} (step {at})")
    if c.weights:
        name = max(c.weights, key=c.weights.get)
        lines.append(f"  final weights: largest |difference| / largest |weight| "
                     f"{c.weights[name]:.3g} ({name})")
    return "\n".join(lines)


def write_csv(c: Comparison, path: Path) -> None:
    cols = ["step", "loss_lenlab", "loss_torch", "rel_loss", "grad_norm_lenlab",
            "grad_norm_torch", "rel_grad_norm", "lr_lenlab", "lr_torch"]
    if c.control is not None:
        cols.append("control_rel_loss")
    with open(path, "w") as f:
        f.write(",".join(cols) + "\n")
        for i in range(len(c.steps)):
            row = [c.steps[i], repr(c.lenlab["loss"][i]), repr(c.torch.loss[i]), c.loss[i],
                   repr(c.lenlab["grad_norm"][i]), repr(c.torch.grad_norm[i]), c.grad_norm[i],
                   repr(c.lenlab["lr"][i]), repr(c.torch.lr[i])]
            if c.control is not None:
                row.append(c.control[i])
            f.write(",".join(str(x) for x in row) + "\n")
