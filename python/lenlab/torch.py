"""A lenlab run as a PyTorch module: lenlab's transformer written in PyTorch from its documented
conventions (docs/model.md), with autograd for the backward. It is also the model of the training
cross-check (tools/torch_reference trains it on lenlab's batches and matches lenlab step for step),
so this is the one PyTorch copy of lenlab's model.

    import lenlab
    run = lenlab.load("runs/<id>")
    model = run.to_torch()                      # or lenlab.torch.load(run_dir)
    out = model(torch.tensor([[2, 1, 0, 1, 3]]))  # BOS 1 0 1 EOS: out.scalar [1]
    model.h[0].attn.probs.register_forward_hook(lambda m, i, p: print(p.shape))  # [S, H, L, L]

Hook points (forward hooks, each an nn.Identity the tensor passes through, or a block):
`h[l]` sees block l's output, the residual stream [S, L, d]; `h[l].attn.scores` the attention
logits after the position bias and the causal mask, [S, H, Lq, Lk] (-inf where masked);
`h[l].attn.probs` the attention probabilities, same shape; `ln_f` the final layer norm's rows.
Parameter names (model.state_dict()) are lenlab's checkpoint names ("h.0.attn.c_attn.weight").

Conventions (models/parameters.hpp, models/cpu/*.hpp):
- weights are [in, out] and a linear layer computes x @ W + b;
- pre-LN blocks: x + attn(LN1(x)), then + MLP(LN2(.)); layer norm eps 1e-5, biased variance;
- GELU is the tanh approximation; attention scale 1/sqrt(head_dim); causal by row;
- [q | k | v] columns, head h owning columns h*hd .. (h+1)*hd of each third;
- the token embedding is multiplied by embedding_scale (1, or sqrt(d_model) with "sqrt_d", as
  Vaswani et al. scale it) before a position table is added;
- sinusoidal adds Vaswani et al.'s fixed table to the token embedding, sin(pos / 10000^(2i/d))
  in column 2i and its cos in column 2i + 1, in float64 then rounded to the model's dtype;
- RoPE rotates the pairs (2i, 2i+1) of q and k by pos * base^(-2i/hd), angles in float64 then
  rounded to the model's dtype; ALiBi adds -slope_h * (pos_i - pos_j) (Press et al.'s slopes);
- t5 adds a learned scalar per head and distance bucket (Hugging Face's
  T5Attention._relative_position_bucket, bidirectional=False), from pe.t5.bias [tables, buckets,
  H]; kerple adds -r1 log(1 + r2 (pos_i - pos_j)), r = softplus(pe.kerple.r1 / r2 [n_layer, H]);
  fire adds MLP(psi(delta) / psi(max(L, pos_i))), psi(x) = log(1 + c x), c and L softplus'd, the
  MLP 1 -> W (ReLU) -> H from pe.fire.w1 [1, n_layer W], b1, w2 [W, n_layer H] (no output bias),
  and at pos_i = L the max is L (which then takes the gradient), as lenlab's;
- heads read rows of the final residual stream through the final layer norm: the scalar head
  GELU(z W1 + b1) w2 + b2, the token head z W + b.

A lenlab batch is packed (sequences back to back); here it is padded to [S, L] and masked, which
gives the same numbers (a masked key's exp(-inf) is exactly 0). What this model does not have:
a user's bias expression (pe = "bias"), a RoPE context extension trained with
(--train-rope-scaling) and the test-time attention settings of `lenlab eval` (Λ-mask, distance
cap, temperature, RoPE scaling at test time); load() refuses the first two by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError as e:  # torch is an optional dependency: only this module needs it
    raise ImportError("lenlab.torch (run.to_torch()) needs PyTorch, which is not installed for "
                      "this Python: `pip install torch` (or `pip install 'lenlab[torch]'`), or on "
                      "Debian `apt-get install python3-torch`") from e

LAYER_NORM_EPS = 1e-5

# The encodings this model computes; the others name themselves in load()'s error.
SUPPORTED_ENCODINGS = ("nope", "learned", "sinusoidal", "alibi", "rope", "t5", "kerple", "fire")


@dataclass
class ModelConfig:
    n_layer: int
    d_model: int
    n_head: int
    d_ff: int
    pe: str  # one of SUPPORTED_ENCODINGS
    vocab_size: int
    rope_base: float = 10000.0
    t5_buckets: int = 32
    t5_max_distance: int = 128
    embedding_scale: float = 1.0

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    @staticmethod
    def from_run(config: dict, tensors: dict) -> "ModelConfig":
        """From a run's manifest config and its checkpoint's tensors (the vocabulary is wte's).
        Raises ValueError naming a setting this model does not compute."""
        pe = str(config.get("pe", "nope"))
        if pe not in SUPPORTED_ENCODINGS:
            raise ValueError(f"positional encoding {pe!r} has no PyTorch model here; the "
                             f"encodings it has: {', '.join(SUPPORTED_ENCODINGS)}")
        scaling = str(config.get("train_rope_scaling", "") or "none")
        if scaling != "none":
            raise ValueError(f"the run was trained with RoPE scaling {scaling!r} "
                             "(--train-rope-scaling), which the PyTorch model does not compute; "
                             "it has plain RoPE angles only")
        return ModelConfig(n_layer=int(config["n_layer"]), d_model=int(config["d_model"]),
                           n_head=int(config["n_head"]), d_ff=int(config["d_ff"]), pe=pe,
                           vocab_size=int(tensors["wte"].shape[0]),
                           rope_base=float(config.get("rope_base", 10000.0)),
                           t5_buckets=int(config.get("t5_buckets", 32)),
                           t5_max_distance=int(config.get("t5_max_distance", 128)),
                           embedding_scale=embedding_scale_of(config))


def embedding_scale_of(config: dict) -> float:
    """The run's token-embedding multiplier: "sqrt_d" is sqrt(d_model), else the number."""
    text = str(config.get("embedding_scale", "1"))
    return math.sqrt(int(config["d_model"])) if text == "sqrt_d" else float(text)


def sinusoidal_table(positions: torch.Tensor, d_model: int) -> torch.Tensor:
    """Vaswani et al. (2017) §3.5, [..., d_model] float64 for integer positions [...]:
    PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(the same)."""
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    # p · 10000^(−2i/d), formed as lenlab forms it (models/encodings/sinusoidal.cpp)
    angle = positions.to(torch.float64)[..., None] * torch.pow(10000.0, -two_i / d_model)
    table = torch.empty(*positions.shape, d_model, dtype=torch.float64)
    table[..., 0::2] = torch.sin(angle)
    table[..., 1::2] = torch.cos(angle[..., : d_model // 2])
    return table


def alibi_slopes(n_head: int) -> list[float]:
    """Press et al.: a geometric sequence from 2^(-8/n) with that ratio; for a head count that is
    not a power of two, the closest power's slopes and every other slope of the next."""
    def pow2(n):
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]
    closest = 1
    while closest * 2 <= n_head:
        closest *= 2
    slopes = pow2(closest)
    extra = pow2(2 * closest)
    i = 0
    while len(slopes) < n_head:
        slopes.append(extra[i])
        i += 2
    return slopes


def t5_bucket(relative_position: torch.Tensor, num_buckets: int, max_distance: int) -> torch.Tensor:
    """T5's causal bucket of memory - query positions (Hugging Face's
    T5Attention._relative_position_bucket with bidirectional=False)."""
    n = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    if_large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                            * (num_buckets - max_exact)).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    return torch.where(is_small, n, if_large)


@dataclass
class PaddedBatch:
    """A lenlab batch (train/batch_log.hpp's fields) as padded [S, L] tensors, with every readout
    row as an index into the flattened [S * L] rows."""
    tokens: torch.Tensor      # [S, L] int64 (padding: 0)
    positions: torch.Tensor   # [S, L] int64 (padding: 0)
    valid: torch.Tensor       # [S, L] bool
    scalar_index: torch.Tensor | None  # [R] into S * L
    token_index: torch.Tensor | None   # [R'] into S * L

    @staticmethod
    def from_packed(step: dict) -> "PaddedBatch":
        """From a batch log entry's "tokens", "positions", "offsets" and the rows read
        ("scalar_rows", "token_rows": indices into the packed rows)."""
        offsets = np.asarray(step["offsets"], dtype=np.int64)
        tokens = np.asarray(step["tokens"], dtype=np.int64)
        positions = np.asarray(step["positions"], dtype=np.int64)
        lengths = np.diff(offsets)
        S, L = len(lengths), int(lengths.max())
        seq = np.repeat(np.arange(S), lengths)          # each packed row's sequence
        col = np.arange(len(tokens)) - offsets[seq]     # and its row within it
        flat = seq * L + col
        tok = np.zeros(S * L, dtype=np.int64)
        pos = np.zeros(S * L, dtype=np.int64)
        valid = np.zeros(S * L, dtype=bool)
        tok[flat], pos[flat], valid[flat] = tokens, positions, True

        def index(rows):
            return None if rows is None else torch.from_numpy(flat[np.asarray(rows, np.int64)])
        return PaddedBatch(torch.from_numpy(tok.reshape(S, L)), torch.from_numpy(pos.reshape(S, L)),
                           torch.from_numpy(valid.reshape(S, L)), index(step.get("scalar_rows")),
                           index(step.get("token_rows")))

    @staticmethod
    def from_sequences(sequences: list[list[int]], scalar_rows: list[list[int]] | None = None,
                       token_rows: list[list[int]] | None = None,
                       positions: list[list[int]] | None = None) -> "PaddedBatch":
        """Sequences of token ids (of different lengths), read at the rows given per sequence
        (0-based rows of that sequence), at positions 0, 1, ... unless `positions` gives them."""
        step = {"tokens": [], "positions": [], "offsets": [0]}
        for i, seq in enumerate(sequences):
            step["tokens"] += list(seq)
            step["positions"] += list(positions[i]) if positions else list(range(len(seq)))
            step["offsets"].append(len(step["tokens"]))
        for key, rows in (("scalar_rows", scalar_rows), ("token_rows", token_rows)):
            if rows is not None:
                step[key] = [step["offsets"][i] + r for i, per in enumerate(rows) for r in per]
        return PaddedBatch.from_packed(step)


class KeyValueCache:
    """Incremental decoding's memory (Transformer.forward(batch, cache)): per layer the keys and
    values [S, H, n, hd] of the n rows seen (rotated, for RoPE), and those rows' positions and
    validity [S, n]. Every sequence advances by the batch's L rows a step (pad with valid=False)."""

    def __init__(self):
        self.k: dict[int, torch.Tensor] = {}
        self.v: dict[int, torch.Tensor] = {}
        self.positions: torch.Tensor | None = None
        self.valid: torch.Tensor | None = None

    @property
    def length(self) -> int:
        return 0 if self.positions is None else self.positions.shape[1]

    def append(self, l: int, k: torch.Tensor, v: torch.Tensor):
        """Layer l's keys and values with the step's appended: [S, H, n + L, hd] each."""
        if l in self.k:
            k, v = torch.cat((self.k[l], k), dim=2), torch.cat((self.v[l], v), dim=2)
        self.k[l], self.v[l] = k, v
        return k, v

    def keys_with(self, batch: PaddedBatch):
        """The keys' positions and validity [S, n + L]: the cache's, then the batch's."""
        if self.positions is None:
            return batch.positions, batch.valid
        return (torch.cat((self.positions, batch.positions), dim=1),
                torch.cat((self.valid, batch.valid), dim=1))

    def advance(self, batch: PaddedBatch):
        self.positions, self.valid = self.keys_with(batch)


class Output(NamedTuple):
    """A forward's readouts: the scalar head's outputs [R] and the token head's logits [R', V] at
    the rows the batch reads (a [S, L] token tensor: [S] at each last row, [S, L, V] at every
    row); None for a head the model does not have."""
    scalar: torch.Tensor | None
    logits: torch.Tensor | None


# ---- the modules: each holds its parameters under lenlab's names ------------------------------


class Parameters(nn.Module):
    """Named parameters and nothing else (a positional encoding's tables): lenlab's names below
    the owner's prefix."""

    def __init__(self, tensors: dict[str, torch.Tensor]):
        super().__init__()
        for name, t in tensors.items():
            self.register_parameter(name, nn.Parameter(t))


class Linear(nn.Module):
    """lenlab's linear layer: x @ weight + bias, weight [in, out] (the transpose of nn.Linear's)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor):
        super().__init__()
        self.weight, self.bias = nn.Parameter(weight), nn.Parameter(bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight + self.bias


class LayerNorm(nn.Module):
    def __init__(self, weight: torch.Tensor, bias: torch.Tensor):
        super().__init__()
        self.weight, self.bias = nn.Parameter(weight), nn.Parameter(bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, LAYER_NORM_EPS)


class _Pass:
    """What every layer of one forward reads: the batch, the cache, the model's encoding."""

    def __init__(self, model: "Transformer", batch: PaddedBatch, cache: KeyValueCache | None):
        self.model, self.batch, self.cache = model, batch, cache


class Attention(nn.Module):
    """Causal multi-head attention of one layer; `scores` and `probs` are hook points."""

    def __init__(self, take, layer: int):
        super().__init__()
        self.layer = layer
        self.c_attn = Linear(take("attn.c_attn.weight"), take("attn.c_attn.bias"))
        self.c_proj = Linear(take("attn.c_proj.weight"), take("attn.c_proj.bias"))
        self.scores = nn.Identity()  # [S, H, Lq, Lk] logits after the bias and the mask
        self.probs = nn.Identity()   # [S, H, Lq, Lk] softmax of the scores

    def forward(self, a: torch.Tensor, ctx: _Pass) -> torch.Tensor:
        m, c, l, batch, cache = ctx.model, ctx.model.config, self.layer, ctx.batch, ctx.cache
        S, L, d = a.shape
        H, hd = c.n_head, c.head_dim
        q, k, v = (t.reshape(S, L, H, hd).transpose(1, 2) for t in self.c_attn(a).split(d, dim=-1))
        if c.pe == "rope":
            q, k = m.rope(q, batch.positions), m.rope(k, batch.positions)
        if m.qk_mask is not None and l in m.qk_mask:
            mask = m.qk_mask[l].to(q.dtype)[None, :, None, :]
            q, k = q * mask, k * mask
        # The keys: the batch's rows, after the cache's (rows 0..first-1) when decoding.
        first, key_positions, key_valid = 0, batch.positions, batch.valid
        if cache is not None:
            first = cache.length
            k, v = cache.append(l, k, v)
            key_positions, key_valid = cache.keys_with(batch)
        logits = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(hd))  # [S, H, L, first + L]
        logits = logits + m.position_bias(l, batch.positions, key_positions)
        row, key_row = first + torch.arange(L), torch.arange(first + L)
        allowed = (key_row[None, :] <= row[:, None])[None] & key_valid[:, None, :]  # [S, L, Lk]
        logits = self.scores(logits.masked_fill(~allowed[:, None], float("-inf")))
        probs = self.probs(torch.softmax(logits, dim=-1))
        if m.on_attention is not None:
            m.on_attention(l, logits, probs)
        out = probs @ v  # [S, H, L, hd]
        return self.c_proj(out.transpose(1, 2).reshape(S, L, d))


class MLP(nn.Module):
    def __init__(self, take):
        super().__init__()
        self.c_fc = Linear(take("mlp.c_fc.weight"), take("mlp.c_fc.bias"))
        self.c_proj = Linear(take("mlp.c_proj.weight"), take("mlp.c_proj.bias"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    """One pre-LN block; its output (a forward hook's) is the residual stream after it."""

    def __init__(self, take, layer: int):
        super().__init__()
        self.ln_1 = LayerNorm(take("ln_1.weight"), take("ln_1.bias"))
        self.attn = Attention(take, layer)
        self.ln_2 = LayerNorm(take("ln_2.weight"), take("ln_2.bias"))
        self.mlp = MLP(take)

    def forward(self, x: torch.Tensor, ctx: _Pass) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x), ctx)
        return x + self.mlp(self.ln_2(x))


class ScalarHead(nn.Module):
    def __init__(self, take):
        super().__init__()
        self.fc1 = Linear(take("head.fc1.weight"), take("head.fc1.bias"))
        self.fc2 = Linear(take("head.fc2.weight"), take("head.fc2.bias"))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(z), approximate="tanh"))[:, 0]


class Transformer(nn.Module):
    """The model, its parameters under lenlab's names (state_dict() keys are the checkpoint's).
    Built over tensors by name; each becomes an nn.Parameter sharing the tensor's storage."""

    def __init__(self, config: ModelConfig, tensors: dict[str, torch.Tensor]):
        super().__init__()
        self.config = config
        left = dict(tensors)

        def taker(prefix: str):
            def take(name: str) -> torch.Tensor:
                full = prefix + name
                if full not in left:
                    raise ValueError(f"the checkpoint has no tensor {full!r}, which a "
                                     f"{config.pe} model with these sizes has")
                return left.pop(full).detach()
            return take

        take = taker("")
        self.wte = nn.Parameter(take("wte"))
        if config.pe == "learned":
            self.wpe = nn.Parameter(take("wpe"))
        tables: dict[str, dict[str, torch.Tensor]] = {}
        for name in [n for n in left if n.startswith("pe.")]:
            _, encoding, key = name.split(".", 2)
            tables.setdefault(encoding, {})[key] = take(name)
        # pe.<encoding>.<table>: the learned distance biases' parameters (t5, kerple, fire)
        self.pe = nn.ModuleDict({e: Parameters(t) for e, t in tables.items()})
        self.h = nn.ModuleList(Block(taker(f"h.{l}."), l) for l in range(config.n_layer))
        self.ln_f = LayerNorm(take("ln_f.weight"), take("ln_f.bias"))
        self.head = ScalarHead(take) if "head.fc1.weight" in left else None
        self.lm_head = (Linear(take("lm_head.weight"), take("lm_head.bias"))
                        if "lm_head.weight" in left else None)
        if left:
            raise ValueError(f"the checkpoint has tensors a {config.pe} model does not use: "
                             f"{', '.join(sorted(left))}")
        # For looking inside (tools/torch_reference/anatomy.py); both None when training:
        # qk_mask[l] [H, hd] multiplies layer l's q and k after RoPE (0 removes a pair's part of
        # every logit); on_attention(l, logits, probs) sees each layer's [S, H, L, L] tensors.
        self.qk_mask: dict[int, torch.Tensor] | None = None
        self.on_attention = None

    @property
    def dtype(self) -> torch.dtype:
        return self.wte.dtype

    def rope(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """x [S, H, L, hd] rotated pairwise by each row's position."""
        hd = self.config.head_dim
        theta = self.config.rope_base ** (-2.0 * torch.arange(hd // 2, dtype=torch.float64) / hd)
        angle = positions.to(torch.float64)[:, None, :, None] * theta  # [S, 1, L, hd/2]
        cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
        x0, x1 = x[..., 0::2], x[..., 1::2]
        out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
        return out.flatten(-2)

    def position_bias(self, l: int, query: torch.Tensor, key: torch.Tensor):
        """Layer l's additive bias on the logits [S, H, Lq, Lk] of queries at positions query
        [S, Lq] and keys at key [S, Lk] (the full forward: both the sequence's; the cached decoder:
        the new rows' and the cache's), or 0 for no bias."""
        c, dtype = self.config, self.dtype
        H = c.n_head
        bias = 0
        if c.pe == "alibi":
            slopes = torch.tensor(alibi_slopes(H), dtype=torch.float64).to(dtype)
            distance = (query[:, :, None] - key[:, None, :]).to(dtype)
            bias = -slopes[None, :, None, None] * distance[:, None]
        delta = (query[:, :, None] - key[:, None, :]).clamp(min=0)  # [S, Lq, Lk]
        if c.pe == "t5":
            table = self.pe["t5"].bias  # [tables, buckets, H]
            w = table[l if table.shape[0] > 1 else 0]
            bucket = t5_bucket(-delta, c.t5_buckets, c.t5_max_distance)
            bias = w[bucket].permute(0, 3, 1, 2)  # [S, Lq, Lk, H] -> [S, H, Lq, Lk]
        if c.pe == "kerple":
            p = self.pe["kerple"]
            r1 = F.softplus(p.r1[l])[None, :, None, None]
            r2 = F.softplus(p.r2[l])[None, :, None, None]
            bias = -r1 * torch.log1p(r2 * delta[:, None].to(dtype))
        if c.pe == "fire":
            p = self.pe["fire"]
            W = p.b1.shape[1]
            w1 = p.w1[0, l * W:(l + 1) * W]
            w2 = p.w2[:, l * H:(l + 1) * H]
            scale = F.softplus(p.c[l])
            threshold = F.softplus(p.threshold[l])
            at = query[:, :, None].to(dtype)  # [S, Lq, 1]
            m = torch.where(threshold >= at, threshold, at)  # max(L, pos_i), L on a tie
            x = torch.log1p(scale * delta.to(dtype)) / torch.log1p(scale * m)  # [S, Lq, Lk]
            hidden = torch.relu(x[..., None] * w1 + p.b1[l])  # [S, Lq, Lk, W]
            bias = (hidden @ w2).permute(0, 3, 1, 2)  # [S, Lq, Lk, H] -> [S, H, Lq, Lk]
        return bias

    def batch_of(self, tokens: torch.Tensor, positions: torch.Tensor | None = None) -> PaddedBatch:
        """Whole sequences [S, L] of token ids at positions 0..L-1 (or `positions` [S, L]), read
        at each last row by the scalar head and at every row by the token head."""
        S, L = tokens.shape
        if positions is None:
            positions = torch.arange(L, dtype=torch.int64).expand(S, L)
        every = torch.arange(S * L)
        return PaddedBatch(tokens.to(torch.int64), positions.to(torch.int64),
                           torch.ones(S, L, dtype=torch.bool),
                           every[L - 1::L] if self.head is not None else None,
                           every if self.lm_head is not None else None)

    def forward(self, batch: PaddedBatch | torch.Tensor, cache: KeyValueCache | None = None,
                positions: torch.Tensor | None = None) -> Output:
        """The heads' outputs at the rows the batch reads. `batch` is a PaddedBatch or a [S, L]
        tensor of token ids (batch_of: then the logits come back as [S, L, V]). With a cache, the
        batch's rows follow the rows the cache holds (their keys and values are appended to it):
        the same logits as a forward over the whole sequences."""
        whole = None
        if isinstance(batch, torch.Tensor):
            whole = batch.shape
            batch = self.batch_of(batch, positions)
        c = self.config
        d = c.d_model
        x = self.wte[batch.tokens]
        if c.embedding_scale != 1.0:
            x = x * c.embedding_scale
        if c.pe == "learned":
            x = x + self.wpe[batch.positions]
        elif c.pe == "sinusoidal":
            x = x + sinusoidal_table(batch.positions, d).to(self.dtype)
        ctx = _Pass(self, batch, cache)
        for block in self.h:
            x = block(x, ctx)
        if cache is not None:
            cache.advance(batch)
        rows = x.reshape(-1, d)
        scalar = tokens = None
        if batch.scalar_index is not None:
            scalar = self.head(self.ln_f(rows[batch.scalar_index]))
        if batch.token_index is not None:
            tokens = self.lm_head(self.ln_f(rows[batch.token_index]))
            if whole is not None:
                tokens = tokens.reshape(*whole, -1)
        return Output(scalar, tokens)


def from_run(run, dtype: torch.dtype | None = None) -> Transformer:
    """A lenlab.Run's trained model (model.safetensors) as a Transformer, in the run's precision
    unless `dtype` is given, in eval mode (it has no dropout: train() changes nothing). Raises
    lenlab.UsageError naming a setting the model does not compute."""
    from . import UsageError

    if not (run.dir / "model.safetensors").is_file():
        raise UsageError(f"{run.dir}: no model.safetensors: the run is {run.status!r}, and only "
                         "a finished run has its trained weights")
    tensors = run.parameters
    if dtype is None:
        dtype = torch.float64 if tensors["wte"].dtype == np.float64 else torch.float32
    try:
        config = ModelConfig.from_run(run.config, tensors)
    except ValueError as e:
        raise UsageError(f"{run.dir}: {e}") from None
    model = Transformer(config, {n: torch.tensor(np.asarray(a), dtype=dtype)
                                 for n, a in tensors.items()})
    return model.eval()


def load(run_dir, dtype: torch.dtype | None = None) -> Transformer:
    """lenlab.load(run_dir).to_torch(dtype): a run folder's trained model."""
    from . import load as load_run

    return from_run(load_run(run_dir), dtype)
