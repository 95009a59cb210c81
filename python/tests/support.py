"""What the Python module's tests share: the CLI's program, tiny settings, and a CLI run read back."""

import os
import subprocess
from pathlib import Path

import lenlab

LENLAB = os.environ.get("LENLAB_BINARY", "lenlab")

# The tiny model of the experiment tests' configs, as TOML lines of their [defaults].
TINY_MODEL_TOML = """warmup_steps = 5
d_model = 16
n_head = 2
d_ff = 32
n_layer = 1
eval_samples = 16
"""

TINY = dict(task="length", pe="rope", l_train=4, l_test=8, steps=60, batch_size=16, d_model=16,
            n_head=2, d_ff=32, n_layer=1, eval_samples=32, warmup_steps=5, seed=3)


def cli_flags(settings: dict) -> list:
    """Python's settings as `lenlab train`'s flags (batch_size is --batch, warmup_steps --warmup)."""
    flags = {"batch_size": "--batch", "warmup_steps": "--warmup"}
    out = []
    for k, v in settings.items():
        out += [flags.get(k, "--" + k.replace("_", "-")), str(v)]
    return out


def cli_train(out: Path, **settings):
    args = [LENLAB, "train", "--out", str(out), *cli_flags(settings)]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return lenlab.load(out)
