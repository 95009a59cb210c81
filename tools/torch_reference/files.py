"""Reading and writing lenlab's files with the standard library and NumPy only: safetensors
checkpoints (F32, F64), a run's manifest and loss.csv, and the batch log (--save-batches)."""

from __future__ import annotations

import csv
import json
import struct
from pathlib import Path
from typing import Iterator

import numpy as np

_DTYPES = {"F32": np.float32, "F64": np.float64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor by name, in its stored type."""
    data = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        dtype = np.dtype(_DTYPES[entry["dtype"]]).newbyteorder("<")
        out[name] = np.frombuffer(body[begin:end], dtype=dtype).reshape(entry["shape"]).copy()
    return out


def write_safetensors(path: Path, tensors: dict[str, np.ndarray], metadata: dict | None = None):
    """tensors (float32 or float64 arrays) in the order given, as lenlab's reader expects."""
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        dtype = "F64" if a.dtype == np.float64 else "F32"
        raw = a.astype("<f8" if dtype == "F64" else "<f4").tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def read_manifest(run_dir: Path) -> dict:
    return json.loads((Path(run_dir) / "manifest.json").read_text())


def read_loss_csv(run_dir: Path) -> dict[str, np.ndarray]:
    """loss.csv's columns (step, lr, loss, grad_norm[, misalign]) as float64 arrays."""
    with open(Path(run_dir) / "loss.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]} if rows else {}


def read_batches(path: Path) -> Iterator[dict]:
    """The batch log's steps, one dict per line, in order."""
    with open(path) as f:
        for line in f:
            if line.strip():
                yield json.loads(line)
