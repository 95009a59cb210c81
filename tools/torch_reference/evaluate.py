"""The forward pass checked at test lengths: PyTorch's outputs on the exact sequences of a
`lenlab eval RUN --predictions` against the outputs lenlab wrote for them (predictions.csv), by
lenlab's inference path (online softmax, the last block at the read rows only)."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from .files import read_manifest
from lenlab.torch import PaddedBatch
from lenlab.torch import load as load_model

SCALAR_BOS, SCALAR_EOS = 2, 3  # the synthetic tasks' tokens (tasks/batch.hpp)


def compare_predictions(run_dir: Path, eval_dir: Path, chunk: int = 64) -> str:
    info = json.loads((eval_dir / "eval.json").read_text())
    if "attention" in info:
        raise SystemExit(f"{eval_dir}: evaluated with test-time attention settings "
                         f"({info['attention']}); the reference models plain attention only")
    config = read_manifest(run_dir)["config"]
    if int(config.get("random_positions", 0)) > 0:
        raise SystemExit("randomized positions: predictions.csv does not hold the positions")
    model = load_model(run_dir)
    with open(eval_dir / "predictions.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    token_task = "labels" in rows[0]
    by_length = defaultdict(list)
    for r in rows:
        by_length[int(r["length"])].append(r)
    lines = [f"{run_dir} evaluated by lenlab ({eval_dir}) and by PyTorch {torch.__version__}:"]
    worst = 0.0
    with torch.no_grad():
        for length, group in sorted(by_length.items()):
            diff, agree, n = 0.0, 0, 0
            for start in range(0, len(group), chunk):
                part = group[start:start + chunk]
                if token_task:
                    seqs = [[int(t) for t in r["tokens"].split()] for r in part]
                    labels = [[int(t) for t in r["labels"].split()] for r in part]
                    read = [list(range(int(r["first_answer_row"]),
                                       int(r["first_answer_row"]) + len(lab)))
                            for r, lab in zip(part, labels)]
                    _, logits = model.forward(PaddedBatch.from_sequences(seqs, token_rows=read))
                    p = torch.softmax(logits.to(torch.float64), -1).numpy()
                    flat_labels = np.concatenate([np.asarray(l) for l in labels])
                    ours = p[np.arange(len(flat_labels)), flat_labels]
                    theirs = np.concatenate([[float(x) for x in r["p_label"].split()]
                                             for r in part])
                    arg = np.concatenate([[int(x) for x in r["argmax"].split()] for r in part])
                    agree += int((p.argmax(-1) == arg).sum())
                    n += len(arg)
                else:
                    seqs = [[SCALAR_BOS] + [int(b) for b in r["input"]] + [SCALAR_EOS]
                            for r in part]
                    out, _ = model.forward(PaddedBatch.from_sequences(
                        seqs, scalar_rows=[[len(s) - 1] for s in seqs]))
                    ours = out.to(torch.float64).numpy()
                    theirs = np.array([float(r["output"]) for r in part])
                    scale = max(1.0, float(np.max(np.abs(theirs))))
                    ours, theirs = ours / scale, theirs / scale
                    n += len(part)
                diff = max(diff, float(np.max(np.abs(ours - theirs))))
            worst = max(worst, diff)
            what = (f"largest |p_label difference| {diff:.2e}, argmax agrees on {agree}/{n} "
                    f"answer tokens" if token_task else
                    f"largest |output difference| / max(1, |output|) {diff:.2e} over {n} sequences")
            lines.append(f"  length {length}: {what}")
    lines.append(f"  largest difference at any length: {worst:.2e}")
    return "\n".join(lines)
