#!/usr/bin/python3
"""How a metric is distributed over seeds, per figure, line and test length, from an experiment
folder's results.csv (lenlab run/reproduce): the median, the mean with a 95% bootstrap interval
over seeds, the range, and how many seeds reach a threshold with a 95% Wilson interval. For
questions such as "is RoPE's passkey generalization a lottery?" (docs/methods.md), where the mean
over three seeds hides whether every seed does half-well or half the seeds do well.

    scripts/seed_odds.py DIR [--metric exact_match] [--threshold 0.5] [--figures pe,lr]

A passkey run's value at a length is the mean over its depths, as the figures draw it.
"""

import argparse
import csv
import math
import random
from collections import defaultdict


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean(values: list[float], resamples: int = 4000, seed: int = 1):
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(values) for _ in values) / len(values) for _ in range(resamples))
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("dir")
    p.add_argument("--metric", default="exact_match")
    p.add_argument("--threshold", type=float, default=0.5)
    p.add_argument("--figures", help="comma-separated figure names (default: all)")
    a = p.parse_args()
    wanted = set(a.figures.split(",")) if a.figures else None
    cells = defaultdict(list)  # (figure, line, seed, length) -> values over depths
    with open(f"{a.dir}/results.csv", newline="") as f:
        for r in csv.DictReader(f):
            if wanted and r["figure"] not in wanted or r[a.metric] == "":
                continue
            cells[(r["figure"], r["line"], int(r["seed"]), int(r["length"]))].append(
                float(r[a.metric]))
    by_line = defaultdict(lambda: defaultdict(list))  # (figure, line) -> length -> per-seed values
    for (fig, line, seed, length), v in cells.items():
        by_line[(fig, line)][length].append(sum(v) / len(v))
    print(f"{'figure':14} {'line':38} {'length':>6} {'n':>3} {'median':>7} "
          f"{'mean [95% CI]':>22} {'min..max':>11}  seeds >= {a.threshold} [95% CI]")
    for (fig, line), lengths in by_line.items():
        for length, values in sorted(lengths.items()):
            values.sort()
            n = len(values)
            median = (values[(n - 1) // 2] + values[n // 2]) / 2
            lo, hi = bootstrap_mean(values)
            k = sum(v >= a.threshold for v in values)
            wlo, whi = wilson(k, n)
            print(f"{fig:14} {line:38} {length:>6} {n:>3} {median:>7.2f} "
                  f"{sum(values) / n:>7.2f} [{lo:.2f}, {hi:.2f}] {values[0]:>5.2f}..{values[-1]:.2f}"
                  f"  {k}/{n} [{wlo:.2f}, {whi:.2f}]")


if __name__ == "__main__":
    main()
