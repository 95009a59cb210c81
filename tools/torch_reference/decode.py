"""Decoding from a key-value cache in the reference model (Transformer.forward(batch, cache),
python/lenlab/torch.py): the logits of rows appended to a cache equal a forward over the
whole sequence (tested for every encoding), which gives two independent checks of lenlab's
incremental decoding:

- `stream_nll`: a text read in one pass, each position's cross-entropy of the next character,
  summed per chunk of positions as `lenlab eval --stream` writes stream.csv (plain attention:
  the reference models no Λ-mask);
- `decode_rates`: tokens per second of one-token steps after a prefix, as
  bench/lenlab_decode_bench times lenlab's cache, so the two compare on one machine.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import torch

from lenlab.torch import KeyValueCache, PaddedBatch, Transformer
from lenlab.torch import load as load_model


def rows(tokens: list[int], first: int) -> PaddedBatch:
    """One sequence's tokens at positions first, first + 1, ..., every row read."""
    n = len(tokens)
    return PaddedBatch(torch.tensor([tokens], dtype=torch.int64),
                       torch.arange(first, first + n, dtype=torch.int64)[None],
                       torch.ones(1, n, dtype=torch.bool), None, torch.arange(n))


def cached_logits(model: Transformer, tokens: list[int], step: int) -> torch.Tensor:
    """Every row's logits [n, V], the sequence appended to a cache `step` tokens at a time."""
    cache, out = KeyValueCache(), []
    for first in range(0, len(tokens), step):
        out.append(model.forward(rows(tokens[first:first + step], first), cache)[1])
    return torch.cat(out)


def stream_nll(model: Transformer, tokens: list[int], chunk: int, step: int = 256) -> list[float]:
    """Per chunk of `chunk` positions (1.., as stream.csv's rows), the summed cross-entropy of
    each token at position p given the rows before it, the stream read through a cache."""
    cache, sums = KeyValueCache(), []
    for first in range(0, len(tokens) - 1, step):
        part = tokens[first:min(first + step, len(tokens) - 1)]
        logits = model.forward(rows(part, first), cache)[1].to(torch.float64)
        nll = torch.logsumexp(logits, -1) - logits[torch.arange(len(part)),
                                                   torch.tensor(tokens[first + 1:first + 1 + len(part)])]
        for i, value in enumerate(nll.tolist()):
            position = first + i + 1
            if (position - 1) % chunk == 0:
                sums.append(0.0)
            sums[-1] += value
    return sums


def compare_stream(run_dir: Path, stream_dir: Path) -> str:
    """lenlab's stream.csv against the reference's cross-entropy per chunk on the same text."""
    info = json.loads((stream_dir / "stream.json").read_text())
    if "attention" in info:
        raise SystemExit(f"{stream_dir}: read with test-time attention settings "
                         f"({info['attention']}); the reference models plain attention only")
    if info["stream"]["source"] != "all":
        raise SystemExit(f"{stream_dir}: compare a stream of the whole corpus (--stream all)")
    corpus = Path(info["stream"]["corpus"]).read_bytes()
    symbols = sorted(set(corpus))  # the vocabulary: the corpus's bytes in order, then BOS
    token_of = {b: i for i, b in enumerate(symbols)}
    text = corpus[:info["stream"]["characters"]]
    tokens = [len(symbols)] + [token_of[b] for b in text]
    with open(stream_dir / "stream.csv", newline="") as f:
        lenlab_rows = list(csv.DictReader(f))
    model = load_model(run_dir)
    with torch.no_grad():
        ours = stream_nll(model, tokens, int(info["stream"]["chunk"]))
    worst = 0.0
    lines = [f"{stream_dir} against PyTorch {torch.__version__} ({len(ours)} chunks):"]
    for row, nll in zip(lenlab_rows, ours, strict=True):
        theirs = float(row["cross_entropy"])
        ce = nll / int(row["tokens"])
        worst = max(worst, abs(theirs - ce) / abs(ce))
        lines.append(f"  positions {row['first_position']}..{row['last_position']}: lenlab "
                     f"{theirs:.6f}, PyTorch {ce:.6f}")
    lines.append(f"largest relative difference {worst:.3g}")
    return "\n".join(lines)


def decode_rates(model: Transformer, positions: list[int], tokens: int, seed: int = 2):
    """Tokens per second of `tokens` one-token steps after a prefix of each position (the prefix
    appended in one step, not timed), random tokens."""
    generator = torch.Generator().manual_seed(seed)
    vocab = model.wte.shape[0]
    text = torch.randint(0, vocab, (max(positions) + tokens,), generator=generator).tolist()
    rates = []
    with torch.no_grad():
        for p in positions:
            cache = KeyValueCache()
            model.forward(rows(text[:p], 0), cache)
            start = time.perf_counter()
            for i in range(p, p + tokens):
                model.forward(rows([text[i]], i), cache)
            rates.append(tokens / (time.perf_counter() - start))
    return rates
