"""Training as lenlab trains (train/trainer.hpp), with PyTorch's own pieces where PyTorch has them:
torch.optim.AdamW for the update, torch.nn.utils.clip_grad_norm_ for the clipping, autograd for
every gradient. What is lenlab's by definition is written out here from its documentation:

- the schedule (models/optimizer.hpp): lr * (step + 1) / warmup during the warm-up, then cosine
  from lr to lr * min_lr_ratio over the remaining steps, reaching the floor at the last step;
- the losses (models/cpu/loss.hpp), in float64 on the model's outputs: sum_r w_r (z_r - f(y_r))^2
  on the scalar head, sum_r w_r CE(z_r, y_r) on the token head, and the misalignment pairs'
  w_p (KL(p||q) + KL(q||p)) + e_p (H(p) + H(q)); their sum is the step's loss;
- weight decay on the weight matrices only (rank 2, not the embeddings nor a positional bias's
  "pe.*" parameters).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
import torch

from lenlab.torch import ModelConfig, PaddedBatch, Transformer


@dataclass
class OptimizerSettings:
    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0
    warmup_steps: int = 200
    min_lr_ratio: float = 0.0
    clip_norm: float = 1.0

    @staticmethod
    def from_run(config: dict) -> "OptimizerSettings":
        """From a manifest's config (its keys as lenlab's config files name them)."""
        keys = {"lr": "lr", "beta1": "beta1", "beta2": "beta2", "eps": "adam_eps",
                "weight_decay": "weight_decay", "warmup_steps": "warmup_steps",
                "min_lr_ratio": "min_lr_ratio", "clip_norm": "clip_norm"}
        out = OptimizerSettings()
        for attr, key in keys.items():
            if key in config:
                setattr(out, attr, type(getattr(out, attr))(config[key]))
        return out


def scheduled_lr(o: OptimizerSettings, step: int, total_steps: int) -> float:
    """The learning rate of 0-based `step`."""
    if step < o.warmup_steps:
        return o.lr * (step + 1) / o.warmup_steps
    decay_steps = total_steps - o.warmup_steps
    progress = 1.0 if decay_steps <= 1 else (step - o.warmup_steps) / (decay_steps - 1)
    cosine = 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))
    return o.lr * (o.min_lr_ratio + (1.0 - o.min_lr_ratio) * cosine)


def _rows(step: dict, key: str, dtype) -> torch.Tensor:
    return torch.as_tensor(np.asarray(step[key], dtype=dtype))


def step_loss(scalar, logits, step: dict) -> torch.Tensor:
    """The step's loss in float64 from the heads' outputs (either may be None)."""
    loss = torch.zeros((), dtype=torch.float64)
    if scalar is not None:
        target = _rows(step, "scalar_targets", np.float64)
        weight = _rows(step, "scalar_weights", np.float64)
        loss = loss + (weight * (scalar.to(torch.float64) - target) ** 2).sum()
    if logits is None:
        return loss
    log_p = torch.log_softmax(logits.to(torch.float64), dim=-1)
    labels = _rows(step, "token_labels", np.int64)
    weight = _rows(step, "token_weights", np.float64)
    read = (labels >= 0) & (weight != 0)  # a row read for its pair only has label -1
    if bool(read.any()):
        picked = log_p[read].gather(1, labels[read][:, None])[:, 0]
        loss = loss - (weight[read] * picked).sum()
    if "pair_first" in step:
        a, b = _rows(step, "pair_first", np.int64), _rows(step, "pair_second", np.int64)
        w, e = _rows(step, "pair_weights", np.float64), _rows(step, "pair_entropy_weights",
                                                               np.float64)
        la, lb = log_p[a], log_p[b]
        pa, pb = la.exp(), lb.exp()
        kl = (pa * (la - lb)).sum(-1) + (pb * (lb - la)).sum(-1)
        entropy = -(pa * la).sum(-1) - (pb * lb).sum(-1)
        loss = loss + (w * kl + e * entropy).sum()
    return loss


@dataclass
class TrainLog:
    lr: list = field(default_factory=list)
    loss: list = field(default_factory=list)
    grad_norm: list = field(default_factory=list)  # before clipping


def to_parameters(tensors: dict, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """Leaf tensors of `dtype` that autograd tracks, from NumPy arrays (by lenlab's names)."""
    return {name: torch.tensor(np.asarray(a), dtype=dtype).requires_grad_(True)
            for name, a in tensors.items()}


def train(config: ModelConfig, params: dict[str, torch.Tensor], steps: Iterable[dict],
          total_steps: int, opt: OptimizerSettings) -> TrainLog:
    """Trains `params` in place on the batches of `steps` (batch log entries, in order); on
    return `params` holds the model's nn.Parameters (sharing the given tensors' storage)."""
    model = Transformer(config, params)
    params.update(model.named_parameters())
    decayed = {n for n, p in params.items()
               if p.dim() == 2 and n not in ("wte", "wpe") and not n.startswith("pe.")}
    decay = [p for n, p in params.items() if n in decayed]
    rest = [p for n, p in params.items() if n not in decayed]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": opt.weight_decay},
         {"params": rest, "weight_decay": 0.0}],
        lr=opt.lr, betas=(opt.beta1, opt.beta2), eps=opt.eps)
    everything = list(params.values())
    log = TrainLog()
    for i, step in enumerate(steps):
        lr = scheduled_lr(opt, i, total_steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        for p in everything:  # a parameter the batch does not reach still takes Adam's step
            p.grad = torch.zeros_like(p)
        scalar, logits = model.forward(PaddedBatch.from_packed(step))
        loss = step_loss(scalar, logits, step)
        loss.backward()
        if opt.clip_norm > 0:
            norm = float(torch.nn.utils.clip_grad_norm_(everything, opt.clip_norm))
        else:
            norm = math.sqrt(sum(float((p.grad.to(torch.float64) ** 2).sum()) for p in everything))
        optimizer.step()
        log.lr.append(lr)
        log.loss.append(float(loss))
        log.grad_norm.append(norm)
    return log
