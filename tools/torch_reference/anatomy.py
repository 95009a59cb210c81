"""Inside a trained passkey model: which head retrieves the key, how its attention to the key holds
up past the training lengths, and which RoPE frequency pairs carry the lookup (docs/methods.md,
"Passkey beyond l_train: the odds").

For a run and the test sequences of `lenlab eval RUN --predictions` (the same sequences lenlab
scored), with the PyTorch model (lenlab.torch, python/lenlab/torch.py) on the run's weights:

- source attention: answer row j (the SEP row and the key symbols after it) predicts key symbol j,
  which stands at MARK + 1 + j; its source attention is the probability a head puts there. The
  retrieval head is the last layer's head with the most source attention at the shortest length.
- for the retrieval head at every length: its mean source attention, how often the source is
  the key it attends to most (argmax), and the logit margin: the source's logit minus the
  largest other logit of the row;
- frequency ablation (RoPE): exact match with pair m of the retrieval head's q and k set to 0,
  for each m (pair m turns by theta_m = base^(-2m/hd) per token), and with the slow half or the
  fast half removed.
"""

from __future__ import annotations

import csv
import json
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from .files import read_manifest
from lenlab.torch import PaddedBatch, Transformer
from lenlab.torch import load as load_model


def load(run_dir: Path) -> tuple[Transformer, dict]:
    """The run's model in float64 and its manifest's config."""
    return load_model(run_dir, torch.float64), read_manifest(run_dir)["config"]


def sequences(eval_dir: Path, mark: int):
    """Per length: (tokens, answer rows, labels, source positions) of each sequence."""
    out = defaultdict(list)
    with open(eval_dir / "predictions.csv", newline="") as f:
        for r in csv.DictReader(f):
            tokens = [int(t) for t in r["tokens"].split()]
            labels = [int(t) for t in r["labels"].split()]
            first = int(r["first_answer_row"])
            key = tokens.index(mark) + 1
            rows = list(range(first, first + len(labels)))
            out[int(r["length"])].append((tokens, rows, labels, [key + j for j in range(len(rows))]))
    return out


def batch_of(seqs) -> PaddedBatch:
    """The sequences of `sequences()` at positions 0, 1, ..., read at their answer rows."""
    return PaddedBatch.from_sequences([t for t, _, _, _ in seqs],
                                      token_rows=[r for _, r, _, _ in seqs])


def run_length(model: Transformer, seqs, chunk: int = 25):
    """Exact match and, per layer and head, the answer rows' probability at the source and on
    the key block (MARK and the key), the source's logit and the row's largest other logit:
    arrays [rows, layers, heads]."""
    c = model.config
    correct, src_p, block_p, src_logit, other_logit = [], [], [], [], []
    for start in range(0, len(seqs), chunk):
        part = seqs[start:start + chunk]
        b = batch_of(part)
        seen = {}
        model.on_attention = lambda l, logits, probs: seen.__setitem__(l, (logits, probs))
        with torch.no_grad():
            _, token_logits = model.forward(b)
        model.on_attention = None
        labels = np.concatenate([np.asarray(s[2]) for s in part])
        hit = token_logits.argmax(-1).numpy() == labels
        i = 0
        for s, (_, rows, lab, src) in enumerate(part):
            correct.append(bool(hit[i:i + len(rows)].all()))
            i += len(rows)
            for r, j in zip(rows, src):
                pl, bl, lg, ot = [], [], [], []
                block = slice(src[0] - 1, src[-1] + 1)  # MARK and the key
                for l in range(c.n_layer):
                    logits, probs = seen[l]
                    row = logits[s, :, r, : r + 1].clone()  # [H, keys]
                    pl.append(probs[s, :, r, j].numpy())
                    bl.append(probs[s, :, r, block].sum(-1).numpy())
                    lg.append(row[:, j].numpy().copy())
                    row[:, j] = -np.inf
                    ot.append(row.max(-1).values.numpy())
                src_p.append(pl)
                block_p.append(bl)
                src_logit.append(lg)
                other_logit.append(ot)
    return (float(np.mean(correct)), np.array(src_p), np.array(block_p), np.array(src_logit),
            np.array(other_logit))


def exact_match(model: Transformer, seqs, chunk: int = 50) -> float:
    correct = []
    for start in range(0, len(seqs), chunk):
        part = seqs[start:start + chunk]
        with torch.no_grad():
            _, logits = model.forward(batch_of(part))
        hit = logits.argmax(-1).numpy() == np.concatenate([np.asarray(s[2]) for s in part])
        i = 0
        for _, rows, _, _ in part:
            correct.append(bool(hit[i:i + len(rows)].all()))
            i += len(rows)
    return float(np.mean(correct))


def anatomy(run_dir: Path, lenlab: str, lengths: str = "32,64,128,256", samples: int = 20) -> dict:
    """The report of one run, as a dict (see the module's docstring)."""
    model, config = load(run_dir)
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([lenlab, "eval", str(run_dir), "--lengths", lengths, "--samples",
                               str(samples), "--predictions", "--out", tmp],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"lenlab eval failed: {done.stderr}")
        by_length = sequences(Path(tmp), mark=int(config.get("n_symbols", 16)) + 3)
    c = model.config
    last = c.n_layer - 1
    report = {"run": str(run_dir), "pe": c.pe, "lengths": {}}
    stats = {L: run_length(model, seqs) for L, seqs in sorted(by_length.items())}
    shortest = min(stats)
    head = int(np.argmax(stats[shortest][2][:, last, :].mean(0)))
    report["retrieval_head"] = [last, head]
    for L, (em, p, block, logit, other) in stats.items():
        report["lengths"][L] = {
            "exact_match": em,
            "key_attention": float(block[:, last, head].mean()),
            "source_attention": float(p[:, last, head].mean()),
            "source_is_argmax": float((logit[:, last, head] > other[:, last, head]).mean()),
            "logit_margin": float(np.median(logit[:, last, head] - other[:, last, head])),
            "key_attention_by_head": block.mean(0).tolist(),
            "source_attention_by_head": p.mean(0).tolist(),
        }
    # Each head of the last layer made uniform (q = k = 0): which heads the answer needs.
    report["head_ablation"] = {}
    for h in range(c.n_head):
        mask = torch.ones(c.n_head, c.head_dim, dtype=torch.float64)
        mask[h] = 0
        model.qk_mask = {last: mask}
        report["head_ablation"][h] = {L: exact_match(model, seqs)
                                      for L, seqs in sorted(by_length.items())}
        model.qk_mask = None
    if c.pe == "rope":
        half = c.head_dim // 2
        report["theta"] = [c.rope_base ** (-2.0 * m / c.head_dim) for m in range(half)]
        ablations = {f"pair {m}": [m] for m in range(half)}
        ablations["slow half"] = list(range(half // 2, half))
        ablations["fast half"] = list(range(half // 2))
        report["ablation"] = {}
        for name, pairs in ablations.items():
            mask = torch.ones(c.n_head, c.head_dim, dtype=torch.float64)
            for m in pairs:
                mask[head, 2 * m: 2 * m + 2] = 0
            model.qk_mask = {last: mask}
            report["ablation"][name] = {L: exact_match(model, seqs)
                                        for L, seqs in sorted(by_length.items())}
            model.qk_mask = None
    return report


def describe(r: dict) -> str:
    lines = [f"{r['run']} ({r['pe']}): retrieval head = layer {r['retrieval_head'][0]}, "
             f"head {r['retrieval_head'][1]}",
             f"  {'length':>6} {'exact':>6} {'key attn':>8} {'src attn':>8} {'src=argmax':>10} "
             f"{'margin':>8}"]
    for L, v in r["lengths"].items():
        lines.append(f"  {L:>6} {v['exact_match']:>6.2f} {v['key_attention']:>8.3f} "
                     f"{v['source_attention']:>8.3f} {v['source_is_argmax']:>10.2f} "
                     f"{v['logit_margin']:>8.2f}")
    lengths = list(r["lengths"])
    lines.append("  exact match with one head of the last layer made uniform:")
    for h, by_length in r["head_ablation"].items():
        lines.append(f"    head {h}: " + " ".join(f"{by_length[L]:.2f}" for L in lengths))
    if "ablation" in r:
        lines.append("  exact match with the retrieval head's RoPE pairs removed "
                     f"(lengths {', '.join(map(str, lengths))}):")
        for name, by_length in r["ablation"].items():
            theta = ""
            if name.startswith("pair "):
                m = int(name.split()[1])
                theta = f" theta {r['theta'][m]:.2g}, period {2 * np.pi / r['theta'][m]:.0f} tokens"
            lines.append(f"    {name:>9}: " + " ".join(f"{by_length[L]:.2f}" for L in lengths)
                         + theta)
    return "\n".join(lines)


def main_json(runs: list[Path], lenlab: str, out: Path, **kw) -> None:
    reports = [anatomy(r, lenlab, **kw) for r in runs]
    out.write_text(json.dumps(reports, indent=1))
    for r in reports:
        print(describe(r))
