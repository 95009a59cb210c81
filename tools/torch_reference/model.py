"""lenlab's transformer written again in PyTorch, from its documented conventions (docs/model.md),
with autograd for the backward: an independent implementation to train side by side with lenlab.

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
gives the same numbers (a masked key's exp(-inf) is exactly 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

LAYER_NORM_EPS = 1e-5


@dataclass
class ModelConfig:
    n_layer: int
    d_model: int
    n_head: int
    d_ff: int
    pe: str  # nope, learned, sinusoidal, alibi, rope, t5, kerple, fire
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
        """From a run's manifest config and its checkpoint's tensors (the vocabulary is wte's)."""
        return ModelConfig(n_layer=int(config["n_layer"]), d_model=int(config["d_model"]),
                           n_head=int(config["n_head"]), d_ff=int(config["d_ff"]),
                           pe=str(config["pe"]), vocab_size=int(tensors["wte"].shape[0]),
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


class Transformer:
    """The model over a dict of named parameter tensors (lenlab's names and shapes)."""

    def __init__(self, config: ModelConfig, params: dict[str, torch.Tensor]):
        self.c = config
        self.p = params
        self.dtype = params["wte"].dtype
        # For looking inside (tools/torch_reference/anatomy.py); both None when training:
        # qk_mask[l] [H, hd] multiplies layer l's q and k after RoPE (0 removes a pair's part of
        # every logit); on_attention(l, logits, probs) sees each layer's [S, H, L, L] tensors.
        self.qk_mask: dict[int, torch.Tensor] | None = None
        self.on_attention = None
        if config.pe == "alibi":
            self.slopes = torch.tensor(alibi_slopes(config.n_head), dtype=torch.float64).to(self.dtype)

    def rope(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """x [S, H, L, hd] rotated pairwise by each row's position."""
        hd = self.c.head_dim
        theta = self.c.rope_base ** (-2.0 * torch.arange(hd // 2, dtype=torch.float64) / hd)
        angle = positions.to(torch.float64)[:, None, :, None] * theta  # [S, 1, L, hd/2]
        cos, sin = torch.cos(angle).to(self.dtype), torch.sin(angle).to(self.dtype)
        x0, x1 = x[..., 0::2], x[..., 1::2]
        out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
        return out.flatten(-2)

    def position_bias(self, l: int, query: torch.Tensor, key: torch.Tensor):
        """Layer l's additive bias on the logits [S, H, Lq, Lk] of queries at positions query
        [S, Lq] and keys at key [S, Lk] (the full forward: both the sequence's; the cached decoder,
        tools/torch_reference/decode.py: the new rows' and the cache's), or 0 for no bias."""
        c, p = self.c, self.p
        H = c.n_head
        bias = 0
        if c.pe == "alibi":
            distance = (query[:, :, None] - key[:, None, :]).to(self.dtype)
            bias = -self.slopes[None, :, None, None] * distance[:, None]
        delta = (query[:, :, None] - key[:, None, :]).clamp(min=0)  # [S, Lq, Lk]
        if c.pe == "t5":
            table = p["pe.t5.bias"]  # [tables, buckets, H]
            w = table[l if table.shape[0] > 1 else 0]
            bucket = t5_bucket(-delta, c.t5_buckets, c.t5_max_distance)
            bias = w[bucket].permute(0, 3, 1, 2)  # [S, Lq, Lk, H] -> [S, H, Lq, Lk]
        if c.pe == "kerple":
            r1 = F.softplus(p["pe.kerple.r1"][l])[None, :, None, None]
            r2 = F.softplus(p["pe.kerple.r2"][l])[None, :, None, None]
            bias = -r1 * torch.log1p(r2 * delta[:, None].to(self.dtype))
        if c.pe == "fire":
            W = p["pe.fire.b1"].shape[1]
            w1 = p["pe.fire.w1"][0, l * W:(l + 1) * W]
            w2 = p["pe.fire.w2"][:, l * H:(l + 1) * H]
            scale = F.softplus(p["pe.fire.c"][l])
            threshold = F.softplus(p["pe.fire.threshold"][l])
            at = query[:, :, None].to(self.dtype)  # [S, Lq, 1]
            m = torch.where(threshold >= at, threshold, at)  # max(L, pos_i), L on a tie
            x = torch.log1p(scale * delta.to(self.dtype)) / torch.log1p(scale * m)  # [S, Lq, Lk]
            hidden = torch.relu(x[..., None] * w1 + p["pe.fire.b1"][l])  # [S, Lq, Lk, W]
            bias = (hidden @ w2).permute(0, 3, 1, 2)  # [S, Lq, Lk, H] -> [S, H, Lq, Lk]
        return bias

    def attention(self, a: torch.Tensor, l: int, batch: PaddedBatch,
                  cache: KeyValueCache | None = None) -> torch.Tensor:
        c, p = self.c, self.p
        layer = f"h.{l}."
        S, L, d = a.shape
        H, hd = c.n_head, c.head_dim
        qkv = a @ p[layer + "attn.c_attn.weight"] + p[layer + "attn.c_attn.bias"]
        q, k, v = (t.reshape(S, L, H, hd).transpose(1, 2) for t in qkv.split(d, dim=-1))
        if c.pe == "rope":
            q, k = self.rope(q, batch.positions), self.rope(k, batch.positions)
        if self.qk_mask is not None and l in self.qk_mask:
            mask = self.qk_mask[l].to(self.dtype)[None, :, None, :]
            q, k = q * mask, k * mask
        # The keys: the batch's rows, after the cache's (rows 0..first-1) when decoding.
        first, key_positions, key_valid = 0, batch.positions, batch.valid
        if cache is not None:
            first = cache.length
            k, v = cache.append(l, k, v)
            key_positions, key_valid = cache.keys_with(batch)
        logits = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(hd))  # [S, H, L, first + L]
        logits = logits + self.position_bias(l, batch.positions, key_positions)
        row, key_row = first + torch.arange(L), torch.arange(first + L)
        allowed = (key_row[None, :] <= row[:, None])[None] & key_valid[:, None, :]  # [S, L, Lk]
        logits = logits.masked_fill(~allowed[:, None], float("-inf"))
        probs = torch.softmax(logits, dim=-1)
        if self.on_attention is not None:
            self.on_attention(l, logits, probs)
        out = probs @ v  # [S, H, L, hd]
        return out.transpose(1, 2).reshape(S, L, d)

    def forward(self, batch: PaddedBatch, cache: KeyValueCache | None = None):
        """(scalar outputs [R] or None, token logits [R', V] or None). With a cache, the batch's
        rows follow the rows the cache holds (their keys and values are appended to it): the
        same logits as a forward over the whole sequences (tools/torch_reference/decode.py)."""
        c, p = self.c, self.p
        d = c.d_model
        x = p["wte"][batch.tokens]
        if c.embedding_scale != 1.0:
            x = x * c.embedding_scale
        if c.pe == "learned":
            x = x + p["wpe"][batch.positions]
        elif c.pe == "sinusoidal":
            x = x + sinusoidal_table(batch.positions, d).to(self.dtype)
        for l in range(c.n_layer):
            n = f"h.{l}."
            a = F.layer_norm(x, (d,), p[n + "ln_1.weight"], p[n + "ln_1.bias"], LAYER_NORM_EPS)
            o = self.attention(a, l, batch, cache)
            x = x + o @ p[n + "attn.c_proj.weight"] + p[n + "attn.c_proj.bias"]
            m = F.layer_norm(x, (d,), p[n + "ln_2.weight"], p[n + "ln_2.bias"], LAYER_NORM_EPS)
            h = F.gelu(m @ p[n + "mlp.c_fc.weight"] + p[n + "mlp.c_fc.bias"], approximate="tanh")
            x = x + h @ p[n + "mlp.c_proj.weight"] + p[n + "mlp.c_proj.bias"]
        if cache is not None:
            cache.advance(batch)
        rows = x.reshape(-1, d)

        def final(index):
            return F.layer_norm(rows[index], (d,), p["ln_f.weight"], p["ln_f.bias"],
                                LAYER_NORM_EPS)
        scalar = tokens = None
        if batch.scalar_index is not None:
            h = F.gelu(final(batch.scalar_index) @ p["head.fc1.weight"] + p["head.fc1.bias"],
                       approximate="tanh")
            scalar = (h @ p["head.fc2.weight"] + p["head.fc2.bias"])[:, 0]
        if batch.token_index is not None:
            tokens = final(batch.token_index) @ p["lm_head.weight"] + p["lm_head.bias"]
        return scalar, tokens
