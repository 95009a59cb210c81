"""What a reparameterization written in Python costs against the same built-in: times one training
run of the default model (length task, NoPE, `lenlab train`'s sizes but STEPS steps) with
reparam="sqrt", with reparam=(np.sqrt, square) and with np.sqrt alone (its inverse by bisection),
alternating, and prints the times and their ratios. Run from the repository root after building
the release preset:

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python_reparam.py [STEPS] [REPEATS]
"""

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import lenlab

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 500
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def root(y):
    return np.sqrt(y)


def square(z):
    return z * z


CONTENDERS = (("built-in sqrt", "sqrt"), ("Python (np.sqrt, square)", (root, square)),
              ("Python np.sqrt, bisected", root))
times = {label: [] for label, _ in CONTENDERS}
with tempfile.TemporaryDirectory() as d:
    for i in range(repeats):
        for label, reparam in CONTENDERS:
            start = time.perf_counter()
            lenlab.train(out=Path(d) / f"{i}-{list(times).index(label)}", progress=False,
                         reparam=reparam, steps=steps)
            times[label].append(time.perf_counter() - start)
for label, t in times.items():
    every = ", ".join(f"{x:.3f}" for x in t)
    print(f"{label:26s} best of {repeats}: {min(t):.3f} s  (all: {every})")
for label in ("Python (np.sqrt, square)", "Python np.sqrt, bisected"):
    ratio = min(times[label]) / min(times["built-in sqrt"])
    print(f"{label} / built-in: {ratio:.3f}")
print(f"(one run: {steps} training steps of batch 64, then the evaluation at lengths 1..50, 500 "
      "sequences each)")
