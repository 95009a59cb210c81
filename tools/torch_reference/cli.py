"""The command line: check, compare, retrain, independent, odds, eval-compare, stream-compare,
decode-bench, anatomy (see --help of each)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[2]
DTYPES = {"float32": torch.float32, "float64": torch.float64}


def lenlab_binary(given: str | None) -> str:
    for candidate in (given, os.environ.get("LENLAB_BINARY"), str(REPO / "build/release/lenlab")):
        if candidate and Path(candidate).is_file():
            return candidate
    raise SystemExit("no lenlab binary: build it (scripts/test.sh) or pass --lenlab PATH")


def train_lenlab(binary: str, flags: list[str], precision: str, work: Path) -> Path:
    """`lenlab train FLAGS` in `precision` with its initial weights and batches saved: the run."""
    run = work / precision
    cmd = [binary, "train", *flags, "--precision", precision, "--out", str(run), "--overwrite",
           "--save-init", str(work / f"{precision}-init.safetensors"),
           "--save-batches", str(work / f"{precision}-batches.jsonl")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"lenlab train failed ({done.returncode}):\n{done.stderr}")
    return run


def cmd_check(a) -> int:
    from .compare import compare, report, write_csv
    binary = lenlab_binary(a.lenlab)
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="torch_reference."))
    work.mkdir(parents=True, exist_ok=True)
    worst = 0.0
    for precision in (["float32", "float64"] if a.precision == "both" else [a.precision]):
        run = train_lenlab(binary, a.flags, precision, work)
        c = compare(run, a.steps, control=a.control)
        print(report(c, f"{precision}: lenlab ({run}) against PyTorch {torch.__version__}"))
        write_csv(c, work / f"{precision}-comparison.csv")
        if precision == "float64":
            worst = max(worst, c.worst(c.loss)[0])
    print(f"per-step comparisons: {work}/*-comparison.csv")
    if a.tolerance is not None and worst > a.tolerance:
        print(f"float64 loss differs by {worst:.3g} > --tolerance {a.tolerance}", file=sys.stderr)
        return 1
    return 0


def cmd_compare(a) -> int:
    from .compare import compare, report, write_csv
    c = compare(Path(a.run), a.steps, DTYPES.get(a.dtype), control=a.control)
    print(report(c, f"{a.run} against PyTorch {torch.__version__}"))
    if a.csv:
        write_csv(c, Path(a.csv))
    return 0


def cmd_retrain(a) -> int:
    """PyTorch's trained weights as a run folder that `lenlab eval` reads."""
    from .compare import retrain, write_run
    run, out = Path(a.run), Path(a.out)
    r = retrain(run, None, DTYPES.get(a.dtype))
    write_run(run, out, r, "tools/torch_reference")
    print(f"PyTorch trained {r.steps} steps of {run}; evaluate with: lenlab eval {out} --out DIR")
    return 0


def cmd_independent(a) -> int:
    """The run's config trained in PyTorch with its own initial weights and/or its own batches."""
    from .compare import write_run
    from .independent import train_arm
    run, out = Path(a.run), Path(a.out)
    r = train_arm(run, a.init, a.data, a.seed, DTYPES[a.dtype])
    write_run(run, out, r, f"tools/torch_reference independent --init {a.init} --data {a.data} "
              f"--seed {a.seed}")
    print(f"PyTorch trained {r.steps} steps (init: {a.init}, data: {a.data}, seed {a.seed}); "
          f"evaluate with: lenlab eval {out} --out DIR")
    return 0


def cmd_odds(a) -> int:
    from .odds import run_odds
    return run_odds(lenlab_binary(a.lenlab), Path(a.out), a.seeds, a.flags, a.jobs,
                    a.inits.split(","), a.data.split(","))


def cmd_eval_compare(a) -> int:
    from .evaluate import compare_predictions
    print(compare_predictions(Path(a.run), Path(a.eval)))
    return 0


def cmd_stream_compare(a) -> int:
    from .decode import compare_stream
    print(compare_stream(Path(a.run), Path(a.stream)))
    return 0


def cmd_decode_bench(a) -> int:
    from lenlab.torch import load as load_model

    from .decode import decode_rates
    positions = [int(p) for p in a.positions.split(",")]
    rates = decode_rates(load_model(Path(a.run), torch.float32), positions, a.tokens)
    print(f"PyTorch {torch.__version__}, one thread, {a.tokens} tokens timed at each position, "
          f"the reference model's key-value cache, {a.run}:")
    print(f"{'position':>10} {'cache tok/s':>14}")
    for p, r in zip(positions, rates):
        print(f"{p:>10} {r:>14.0f}")
    return 0


def cmd_anatomy(a) -> int:
    from .anatomy import main_json
    main_json([Path(r) for r in a.runs], lenlab_binary(a.lenlab), Path(a.json),
              lengths=a.lengths, samples=a.samples)
    return 0


def main(argv: list[str] | None = None) -> int:
    from .independent import DATA_SOURCES, INIT_SOURCES
    torch.set_num_threads(1)  # lenlab runs one thread per run; so does the reference
    p = argparse.ArgumentParser(prog="torch_reference", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("check", help="train with lenlab (float32 and float64) and PyTorch, compare",
                       description="Runs `lenlab train FLAGS` in float32 and float64 with "
                       "--save-init and --save-batches, trains PyTorch on the same start and "
                       "batches, and compares every step. FLAGS go after --.")
    c.add_argument("--lenlab", help="the lenlab binary (default: $LENLAB_BINARY, then "
                   "build/release/lenlab)")
    c.add_argument("--work", help="folder for the runs and comparisons (default: a new temporary)")
    c.add_argument("--precision", choices=["both", "float32", "float64"], default="both")
    c.add_argument("--steps", type=int, help="compare the first N steps only")
    c.add_argument("--control", action="store_true",
                   help="also train PyTorch against itself (float32: in float64; float64: from "
                   "weights one ulp off), to show how far the dynamics carry rounding")
    c.add_argument("--tolerance", type=float,
                   help="exit 1 when a float64 step's loss differs by more than this (relative)")
    c.add_argument("flags", nargs=argparse.REMAINDER, help="-- then lenlab train's flags")
    c.set_defaults(func=cmd_check)

    c = sub.add_parser("compare", help="compare a run trained with --save-init/--save-batches")
    c.add_argument("run")
    c.add_argument("--steps", type=int)
    c.add_argument("--dtype", choices=list(DTYPES), help="default: the run's precision")
    c.add_argument("--control", action="store_true")
    c.add_argument("--csv", help="write the per-step comparison here")
    c.set_defaults(func=cmd_compare)

    c = sub.add_parser("retrain", help="train a run again in PyTorch; write a run folder")
    c.add_argument("run")
    c.add_argument("--out", required=True)
    c.add_argument("--dtype", choices=list(DTYPES))
    c.set_defaults(func=cmd_retrain)

    c = sub.add_parser("independent", help="train a run's config in PyTorch from its own "
                       "initial weights and/or its own passkey batches; write a run folder",
                       description="Initial weights drawn by PyTorch from docs/model.md's "
                       "distribution (--init own) or the run's --save-init file (run); batches "
                       "drawn from docs/tasks.md's passkey distribution (--data own) or the run's "
                       "--save-batches log (run). tools/torch_reference/independent.py.")
    c.add_argument("run")
    c.add_argument("--out", required=True)
    c.add_argument("--init", choices=INIT_SOURCES, default="own",
                   help="pytorch-default: PyTorch's modules' own defaults, not lenlab's; "
                   "-embedding, -linear: those of the token embedding, of the linear layers only")
    c.add_argument("--data", choices=DATA_SOURCES, default="own")
    c.add_argument("--seed", type=int, default=1, help="seeds the own draws")
    c.add_argument("--dtype", choices=list(DTYPES), default="float32")
    c.set_defaults(func=cmd_independent)

    c = sub.add_parser("odds", help="passkey exact match past l_train over seeds: lenlab against "
                       "PyTorch from lenlab's or its own initial weights and batches",
                       description="For each seed: `lenlab train FLAGS --seed S` with its initial "
                       "weights and batches saved, then PyTorch trained with each --inits and "
                       "--data source (the run's or its own), every model scored by `lenlab "
                       "eval`; writes odds.csv and odds.md (tools/torch_reference/odds.py). "
                       "FLAGS go after --.")
    c.add_argument("--lenlab")
    c.add_argument("--out", required=True, help="folder for the runs and the summary")
    c.add_argument("--seeds", default="1..10", help="e.g. 1..12")
    c.add_argument("--jobs", type=int, default=1, help="seeds trained at once (one thread each)")
    c.add_argument("--inits", default="run,own", help="initial weights of the PyTorch arms, "
                   f"comma-separated: {', '.join(INIT_SOURCES)}")
    c.add_argument("--data", default="run,own", help="batches of the PyTorch arms, "
                   f"comma-separated: {', '.join(DATA_SOURCES)}")
    c.add_argument("flags", nargs=argparse.REMAINDER, help="-- then lenlab train's flags")
    c.set_defaults(func=cmd_odds)

    c = sub.add_parser("eval-compare", help="PyTorch's outputs on `lenlab eval --predictions`'s "
                       "sequences against lenlab's")
    c.add_argument("run", help="the run whose model.safetensors was evaluated")
    c.add_argument("eval", help="the evaluation folder holding predictions.csv")
    c.set_defaults(func=cmd_eval_compare)

    c = sub.add_parser("stream-compare", help="PyTorch's cross-entropy per chunk on the text of "
                       "`lenlab eval --stream all`'s stream.csv against lenlab's")
    c.add_argument("run", help="the text run that read the stream")
    c.add_argument("stream", help="the folder holding stream.csv and stream.json")
    c.set_defaults(func=cmd_stream_compare)

    c = sub.add_parser("decode-bench", help="tokens per second of the reference model's "
                       "key-value cache, as bench/lenlab_decode_bench times lenlab's")
    c.add_argument("run", help="a trained run (its weights, in float32)")
    c.add_argument("--positions", default="256,1024,4096,16384")
    c.add_argument("--tokens", type=int, default=32, help="tokens timed at each position")
    c.set_defaults(func=cmd_decode_bench)

    c = sub.add_parser("anatomy", help="passkey runs: the retrieval head, its attention past "
                       "l_train, RoPE frequency ablations (tools/torch_reference/anatomy.py)")
    c.add_argument("runs", nargs="+")
    c.add_argument("--lenlab")
    c.add_argument("--lengths", default="32,64,128,256")
    c.add_argument("--samples", type=int, default=20, help="test sequences per length and depth")
    c.add_argument("--json", default="anatomy.json", help="where to write every number")
    c.set_defaults(func=cmd_anatomy)

    a = p.parse_args(argv)
    if a.command in ("check", "odds"):
        a.flags = a.flags[1:] if a.flags[:1] == ["--"] else a.flags
    return a.func(a)
