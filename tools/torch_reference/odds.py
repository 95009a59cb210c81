"""Where a passkey model's odds of generalizing come from: for each seed, lenlab's run and PyTorch's
runs of the same config, whose initial weights and batches are each lenlab's (the run's --save-init
and --save-batches files) or PyTorch's own draws from the distributions lenlab documents
(independent.py; initial weights also as PyTorch's modules default to). Every model is scored by
`lenlab eval` on the same test sequences, so the arms differ only in how they were trained.

Writes, under --out: s<seed>/lenlab (the lenlab run), s<seed>/<arm> and s<seed>/<arm>-eval (each
PyTorch model and its evaluation), odds.csv (seed, arm, exact match in range and past l_train, per
test length) and odds.md (per arm over seeds, and each arm against PyTorch on lenlab's own start
and batches: the difference of means with a bootstrap interval and a two-sided test, paired by
seed where the two arms share a start or batches, Holm-adjusted over the comparisons). Work already
on disk is kept: a killed command, started again, trains only what is missing.
"""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

LENLAB = "lenlab"
REFERENCE = ("run", "run")  # the arm the others are tested against: lenlab's start and data


def arm_name(init: str, data: str) -> str:
    return f"torch-{init}-init-{data}-data"


def arms_of(inits: list[str], datas: list[str]) -> list[tuple[str, str, str]]:
    """(name, init, data) of every PyTorch arm, the reference first and always there."""
    from .independent import DATA_SOURCES, INIT_SOURCES
    for what, given, valid in (("--inits", inits, INIT_SOURCES), ("--data", datas, DATA_SOURCES)):
        bad = [g for g in given if g not in valid]
        if bad:
            raise SystemExit(f"{what} {','.join(bad)}: choose from {', '.join(valid)}")
    pairs = [REFERENCE] + [(i, d) for i in inits for d in datas if (i, d) != REFERENCE]
    return [(arm_name(i, d), i, d) for i, d in pairs]


def parse_seeds(text: str) -> list[int]:
    """"1..12" or "1,2,5" (or both, comma-separated) as a list of seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.partition("..")
        try:
            seeds += list(range(int(lo), int(hi) + 1)) if sep else [int(lo)]
        except ValueError:
            raise SystemExit(f"--seeds {text!r}: write seeds as 1..12 or 1,2,5") from None
    if not seeds:
        raise SystemExit(f"--seeds {text!r} names no seed")
    return seeds


def read_results(path: Path) -> dict[int, float]:
    """results.csv's exact match per test length, averaged over the depths."""
    by_length: dict[int, list[float]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            by_length.setdefault(int(row["length"]), []).append(float(row["exact_match"]))
    return {length: float(np.mean(v)) for length, v in sorted(by_length.items())}


def run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")


def train_seed(binary: str, out: Path, seed: int, flags: list[str],
               arms: list[tuple[str, str, str]]) -> dict[str, Path]:
    """One seed's lenlab run and PyTorch models, each trained and evaluated unless already on disk:
    the results.csv of each."""
    import torch

    from .compare import write_run
    from .independent import train_arm
    torch.set_num_threads(1)
    work = out / f"s{seed}"
    lenlab = work / LENLAB
    results = {LENLAB: lenlab / "results.csv"}
    if not results[LENLAB].is_file():
        work.mkdir(parents=True, exist_ok=True)
        run([binary, "train", *flags, "--seed", str(seed), "--out", str(lenlab), "--overwrite",
             "--save-init", str(work / "init.safetensors"),
             "--save-batches", str(work / "batches.jsonl")])
    for arm, init, data in arms:
        evaluation = work / f"{arm}-eval"
        results[arm] = evaluation / "results.csv"
        if results[arm].is_file():
            continue
        trained = train_arm(lenlab, init, data, seed)
        write_run(lenlab, work / arm, trained,
                  f"tools/torch_reference odds: init {init}, data {data}, seed {seed}")
        run([binary, "eval", str(work / arm), "--out", str(evaluation), "--overwrite"])
    return results


def holm(p: list[float]) -> list[float]:
    """Holm's step-down adjustment of p-values (family-wise error over the list)."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    adjusted, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def bootstrap_interval(a: np.ndarray, b: np.ndarray, paired: bool,
                       draws: int = 20000) -> tuple[float, float]:
    """95 % percentile interval of mean(a) - mean(b) from a fixed generator: paired, the seeds
    resampled together (a[i] and b[i] share a start or batches); unpaired, each on its own."""
    rng = np.random.default_rng(20241129)
    if paired:
        d = (a - b)[rng.integers(0, len(a), (draws, len(a)))].mean(1)
    else:
        d = rng.choice(a, (draws, len(a))).mean(1) - rng.choice(b, (draws, len(b))).mean(1)
    return float(np.quantile(d, 0.025)), float(np.quantile(d, 0.975))


def shared(a: tuple[str, str], b: tuple[str, str]) -> str:
    """What two arms' (init, data) sources have in common, in words ("" for nothing): only a
    lenlab run's files are the same for both; two own draws of one seed come from one generator
    but are no pair to the reference."""
    return " and ".join(what for what, x, y in (("start", a[0], b[0]), ("batches", a[1], b[1]))
                        if x == y == "run")


def summarize(rows: list[dict], l_train: int, sources: dict[str, tuple[str, str]]) -> str:
    """odds.md: per arm the seeds' exact match past l_train, and each arm against the reference:
    paired by seed (Wilcoxon signed-rank) where the two share a start or batches, else unpaired
    (Mann-Whitney U); Holm-adjusted over the comparisons."""
    from scipy.stats import mannwhitneyu, wilcoxon
    reference = arm_name(*REFERENCE)
    arms = list(dict.fromkeys(r["arm"] for r in rows))
    seeds = sorted({r["seed"] for r in rows})
    by = {(r["arm"], r["seed"]): r for r in rows}
    past = {a: np.array([by[a, s]["past"] for s in seeds]) for a in arms}
    inside = {a: np.array([by[a, s]["inside"] for s in seeds]) for a in arms}
    others = [a for a in arms if a != reference]
    common = {a: shared(sources[a], REFERENCE) for a in others}
    def p_value(a: str) -> float:
        if not common[a]:
            return float(mannwhitneyu(past[a], past[reference], alternative="two-sided").pvalue)
        if np.all(past[a] == past[reference]):
            return 1.0  # no difference in any seed (wilcoxon refuses all-zero differences)
        return float(wilcoxon(past[a], past[reference]).pvalue)
    p = [p_value(a) for a in others]
    adjusted = dict(zip(others, holm(p)))
    lines = ["## Exact match past l_train, against the reference", "",
             f"Passkey exact match past l_train = {l_train} (mean over the test lengths above it "
             f"and every depth), {len(seeds)} seeds ({seeds[0]}..{seeds[-1]}); every model scored "
             f"by `lenlab eval`. Against `{reference}`: the difference of means with its 95 % "
             f"bootstrap interval and a two-sided test, paired by seed (Wilcoxon signed-rank) "
             f"where the two arms share the seed's start or batches, else unpaired (Mann-Whitney "
             f"U); p Holm-adjusted over the {len(others)} comparisons.", "",
             "| arm | init | data | in range: mean (lowest) | past l_train: mean | median "
             "| min – max | difference (95 % interval) | shares with the reference "
             "| p (adjusted) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for a in arms:
        v = past[a]
        init, data = sources[a]
        if a == reference:
            diff, with_, test = "reference", "—", "—"
        else:
            lo, hi = bootstrap_interval(v, past[reference], paired=bool(common[a]))
            diff = f"{v.mean() - past[reference].mean():+.3g} ({lo:+.3g} to {hi:+.3g})"
            with_ = common[a] or "nothing (unpaired)"
            test = f"{adjusted[a]:.3g}"
        lines.append(f"| {a} | {init} | {data} | {inside[a].mean():.3g} ({inside[a].min():.3g}) | "
                     f"{v.mean():.3g} | "
                     f"{np.median(v):.3g} | {v.min():.3g} – {v.max():.3g} | {diff} | {with_} | "
                     f"{test} |")
    lengths = [n for n in sorted(rows[0]["by_length"]) if n > l_train]
    lines += ["", "## Exact match per test length past l_train", "", "Mean over the seeds.", "",
              "| arm | " + " | ".join(str(n) for n in lengths) + " |",
              "|---|" + "---|" * len(lengths)]
    for a in arms:
        means = [np.mean([by[a, s]["by_length"][n] for s in seeds]) for n in lengths]
        lines.append(f"| {a} | " + " | ".join(f"{m:.3g}" for m in means) + " |")
    return "\n".join(lines) + "\n"


def run_odds(binary: str, out: Path, seeds_text: str, flags: list[str], jobs: int,
             inits: list[str], datas: list[str]) -> int:
    seeds = parse_seeds(seeds_text)
    arms = arms_of(inits, datas)
    if "--seed" in flags or "--out" in flags:
        raise SystemExit("odds: give the seeds with --seeds and the folder with --out, not among "
                         "lenlab train's flags")
    out.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {s: pool.submit(train_seed, binary, out, s, flags, arms) for s in seeds}
        done = {s: f.result() for s, f in futures.items()}
    from .files import read_manifest
    l_train = int(read_manifest(out / f"s{seeds[0]}" / LENLAB)["config"]["l_train"])
    rows = []
    for seed, results in done.items():
        for arm, path in results.items():
            em = read_results(path)
            inside = [v for length, v in em.items() if length <= l_train]
            beyond = [v for length, v in em.items() if length > l_train]
            if not beyond:
                raise SystemExit(f"{path}: no test length past l_train = {l_train}; give lenlab "
                                 f"train --lengths past it")
            rows.append({"seed": seed, "arm": arm, "inside": float(np.mean(inside)),
                         "past": float(np.mean(beyond)), "by_length": em})
    lengths = sorted(rows[0]["by_length"])
    with open(out / "odds.csv", "w") as f:
        f.write("seed,arm,in_range,past_l_train," + ",".join(f"L{n}" for n in lengths) + "\n")
        for r in rows:
            f.write(f"{r['seed']},{r['arm']},{r['inside']!r},{r['past']!r},"
                    + ",".join(repr(r["by_length"][n]) for n in lengths) + "\n")
    sources = {LENLAB: REFERENCE, **{name: (i, d) for name, i, d in arms}}
    summary = summarize(rows, l_train, sources)
    (out / "odds.md").write_text(summary)
    print(summary, end="")
    print(f"per seed and length: {out / 'odds.csv'}", file=sys.stderr)
    return 0 if all(math.isfinite(r["past"]) for r in rows) else 1
