"""Refreshes docs/data/SOURCE/, the snapshot of results the docs quote, from a run folder: the
`--snapshot` half of scripts/check_docs.py (its docstring and docs/data/README.md say what each
snapshot holds and which command makes it)."""

import csv
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def git_revision() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}"


def write_manifest(out: Path, command: str, source: Path, extra: dict):
    manifest = {
        "command": command,
        "source": str(source),
        "checkout_revision": git_revision(),  # the docs' checkout; the runs' lenlab is in extra
        "machine": machine(),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        **extra,
        "files": sorted(str(p.relative_to(out)) for p in out.rglob("*")
                        if p.is_file() and p.name != "SNAPSHOT.json"
                        and p.relative_to(out).parts[0] != "runs"),
    }
    if (out / "runs").is_dir():  # run records (run_records): hundreds of files, counted
        n = sum(1 for _ in (out / "runs").iterdir())
        manifest["files"].append(f"runs/ ({n} run{'' if n == 1 else 's'}: manifest.json and "
                                 "results.csv each)")
    (out / "SNAPSHOT.json").write_text(json.dumps(manifest, indent=2) + "\n")


def line_means(run_dir: Path, out_csv: Path):
    """Per figure, line and length: the mean, min and max MSE over seeds (what docs quote)."""
    groups = {}
    for fig in sorted(run_dir.glob("fig*.csv")):
        with fig.open() as f:
            for row in csv.DictReader(f):
                if row.get("mse", "") in ("", "inf", "nan"):
                    continue
                key = (row["figure"], row["line"], int(row["length"]))
                groups.setdefault(key, []).append(float(row["mse"]))
    with out_csv.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["figure", "line", "length", "seeds", "mean_mse", "min_mse", "max_mse"])
        for (figure, line, length), v in sorted(groups.items()):
            w.writerow([figure, line, length, len(v), f"{sum(v) / len(v):.6g}",
                        f"{min(v):.6g}", f"{max(v):.6g}"])


def figure_data(run_dir: Path, out_dir: Path):
    """Each figure's data as lenlab drew it (figNAME.dat: per line and length, or position, the
    mean, min and max over seeds of a run's value, a passkey run's the mean over its depths): the
    per-length numbers the docs quote beside report.md's test ranges. Only the figures of the
    folder's config.toml (a folder another config also ran into holds that one's figures too),
    and not the attention plots beside them (figNAME-bias.dat, …: large, and quoted nowhere)."""
    config = (run_dir / "config.toml").read_text()
    out_dir.mkdir()
    for name in re.findall(r"^\[figures\.([^\]]+)\]", config, flags=re.M):
        name = name.strip('"')  # [figures."NAME"] is TOML too
        dat = run_dir / f"fig{name}.dat"
        if dat.is_file():
            shutil.copy(dat, out_dir / dat.name)


def seed_odds(run_dir: Path, out_txt: Path):
    """scripts/seed_odds.py's printout for the folder: per figure, line and length the median,
    the mean with its bootstrap interval, the range and the seeds reaching 0.5 exact match."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "seed_odds.py"), str(run_dir)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"scripts/seed_odds.py {run_dir} failed ({r.returncode}): {r.stderr}")
    out_txt.write_text(f"scripts/seed_odds.py DIR\n\n{r.stdout}")


def run_records(run_dir: Path, out_dir: Path):
    """Each finished run's manifest.json and results.csv (its settings, its training's record —
    the stop rule's checks, the validation score [select] reads — and its scores per test length),
    a few kB a run: what every table of report.md is computed from, without the weights and
    loss.csv. Copied into DIR/runs/ on another machine, they are runs `lenlab run` finds on disk:
    it trains only the rest and writes the report over all (README.md, "Resuming")."""
    finished = []
    for manifest in sorted(run_dir.glob("runs/*/manifest.json")):
        status = json.loads(manifest.read_text()).get("status")
        if status in ("completed", "diverged") and (manifest.parent / "results.csv").is_file():
            finished.append(manifest.parent)
    if not finished:
        sys.exit(f"{run_dir}/runs holds no finished run (a manifest.json saying completed or "
                 "diverged beside a results.csv)")
    for run in finished:
        (out_dir / run.name).mkdir(parents=True)
        for name in ("manifest.json", "results.csv"):
            shutil.copy(run / name, out_dir / run.name / name)


# What an experiment's snapshot may keep beside report.md, for docs that quote more than
# report.md's test ranges: file or folder name -> its maker(run_dir, out_path).
EXTRAS = {"figures": figure_data, "seed_odds.txt": seed_odds, "runs": run_records}


def copy_experiment(run_dir: Path, out: Path, what: str):
    """An experiment folder's report.md, config.toml and selection.json into a fresh `out`."""
    for name in ("report.md", "config.toml", "selection.json"):
        if not (run_dir / name).is_file():
            sys.exit(f"{run_dir} has no {name}: not a finished {what} folder")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for name in ("report.md", "config.toml", "selection.json"):
        shutil.copy(run_dir / name, out / name)


def experiment_manifest(run_dir: Path, out: Path, command: str):
    """SNAPSHOT.json of an experiment folder: its runs and the lenlab revisions that made them."""
    manifests = [json.loads(p.read_text()) for p in run_dir.glob("runs/*/manifest.json")]
    revisions = sorted({m.get("git_revision", "unknown") for m in manifests})
    write_manifest(out, command, run_dir, {"runs": len(manifests), "lenlab_revision": revisions})


def copy_run_log(log: Path, out: Path):
    """What `lenlab run` printed from its first finished round of runs on (each round's runs and
    seconds; with --seeds-until-decided every round) and the shell's `time` after it, as run.log:
    the measured time docs/run_times.md quotes. Its own estimate before training ("estimated:
    … ~1h50m on 2 CPU workers") is kept too, for the docs that set it beside the time taken."""
    lines = log.read_text(errors="replace").splitlines()
    if not any(re.match(r"\d+ runs: ", line) for line in lines):
        sys.exit(f"{log} has no line 'N runs: M trained in S s': not the output of a finished "
                 "`lenlab run`")
    first = next(i for i, line in enumerate(lines)
                 if re.match(r"\d+ runs: |runs \d+% in ", line))  # "runs 99% in 23m44s …"
    kept = [line for line in lines[:first] if line.startswith("estimated: ")]
    kept += [line for line in lines[first:] if not re.match(r"runs \d+% ETA ", line)]  # progress
    (out / "run.log").write_text("\n".join(kept) + "\n")


def snapshot_reproduce(run_dir: Path, out: Path):
    """report.md, config.toml and each line's mean over seeds; not the per-run rows (megabytes)."""
    copy_experiment(run_dir, out, "`lenlab reproduce --out`")
    line_means(run_dir, out / "line_means.csv")
    experiment_manifest(run_dir, out, "build/release/lenlab reproduce --out DIR")


def snapshot_course(work: Path, out: Path):
    """Per lesson NN: its report.md and figures' data, and what its answers' commands printed
    (check_course_answers.py's answers.md, split by lesson) into course/NN/."""
    if not (work / "answers.md").is_file():
        sys.exit(f"{work} has no answers.md: make it with "
                 f"scripts/check_course_answers.py --keep {work}")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for lesson in sorted(work.glob("course/[0-9][0-9]")):
        (out / lesson.name).mkdir()
        # fig*.dat: the figures' data as drawn, with the theory's closed form the lessons quote
        for f in [lesson / "report.md", *sorted(lesson.glob("fig*.csv")),
                  *sorted(lesson.glob("fig*.dat"))]:
            shutil.copy(f, out / lesson.name / f.name)
    # answers.md: "## 1.1" or "## Lesson 7" sections, each a command and what it printed.
    for section in re.split(r"^(?=## )", (work / "answers.md").read_text(), flags=re.M):
        m = re.match(r"## (?:Lesson )?(\d+)", section)
        if m:
            folder = out / f"{int(m.group(1)):02d}"
            folder.mkdir(exist_ok=True)
            with (folder / "answers.md").open("a") as f:
                f.write(section)
    reports = (out / "01" / "report.md").read_text() if (out / "01" / "report.md").exists() else ""
    built = re.search(r"Generated by `lenlab` \(([0-9a-f]+)\)", reports)
    write_manifest(out, "scripts/check_course_answers.py --keep DIR", work,
                   {"lenlab_revision": built.group(1) if built else "unknown"})


# Each `lenlab theory` setting docs/theory.md and the course quote: (file name, its flags).
THEORY_SETTINGS = [
    ("length", "--task length --l-train 10 --l-test 50"),
    ("sum", "--task sum --l-train 10 --l-test 50"),
    ("mean", "--task mean --l-train 10 --l-test 50"),
    ("length-bos-eos", "--task length --l-train 10 --l-test 50 --tokens bos,eos"),
    ("mean-bos-eos", "--task mean --l-train 10 --l-test 1000 --tokens bos,eos"),
    ("length-bos-eos-invsqrt",
     "--task length --l-train 10 --l-test 200 --tokens bos,eos --reparam invsqrt"),
    ("length-bos-eos-inverse",
     "--task length --l-train 10 --l-test 200 --tokens bos,eos --reparam 1/(x+2) "
     "--reparam-inverse 1/x-2"),
]


def snapshot_theory(lenlab: Path, out: Path):
    """`lenlab theory`'s printout and CSV for each setting the docs quote (a second, no runs)."""
    if not lenlab.is_file():
        sys.exit(f"no lenlab at {lenlab}: build it first (cmake --build --preset release)")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for name, flags in THEORY_SETTINGS:
        argv = [str(lenlab), "theory", *flags.split(), "--out", str(out / f"{name}.csv")]
        r = subprocess.run(argv, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"lenlab theory {flags} failed ({r.returncode}): {r.stderr}")
        (out / f"{name}.txt").write_text(f"lenlab theory {flags}\n\n{r.stdout}")
    version = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
    write_manifest(out, "lenlab theory FLAGS (THEORY_SETTINGS in scripts/check_docs.py)", lenlab,
                   {"lenlab_revision": f"the build of the checkout ({version or 'unknown'})"})


def experiment_maker(config: str, flags: str = "", extras: tuple = ()):
    """The maker for `lenlab run CONFIG FLAGS --out DIR` folders: report.md (every figure's table
    and the method comparison: each line's mean, rank, paired test and verdict per test range),
    config.toml, selection.json, chomsky_scores.csv where the config has the Chomsky suite, the
    `extras` named (EXTRAS), and with `log` (the command's output, `time` after it) its end as
    run.log."""
    command = f"build/release/lenlab run {config}{' ' + flags if flags else ''} --out DIR"

    def make(run_dir: Path, out: Path, log: Path = None):
        copy_experiment(run_dir, out, f"`{command}`")
        if (run_dir / "chomsky_scores.csv").is_file():  # the Chomsky suite's per-run scores
            shutil.copy(run_dir / "chomsky_scores.csv", out / "chomsky_scores.csv")
        for name in extras:
            EXTRAS[name](run_dir, out / name)
        if log:
            copy_run_log(log, out)
        experiment_manifest(run_dir, out, command)
    return make


def snapshot_vcl_representation(rep_dir: Path, out: Path):
    """Paper 004's measurement on configs/vcl.toml's runs: for the Markov and the passkey runs,
    `lenlab representation`'s report.md (the correlations with their intervals) and
    representation.dat (per encoding, line and length the mean excess loss and sliced W1 over
    seeds). DIR holds rep-markov/ and rep-passkey/ (each `lenlab representation reps/TASK-*
    --out DIR/rep-TASK`) and reps/, the evaluations they read (for their count and revision)."""
    tasks = ("markov", "passkey")
    for task in tasks:
        for name in ("report.md", "representation.dat"):
            if not (rep_dir / f"rep-{task}" / name).is_file():
                sys.exit(f"{rep_dir / f'rep-{task}'} has no {name}: not a finished "
                         "`lenlab representation` folder")
    evals = [json.loads(p.read_text()) for p in rep_dir.glob("reps/*/eval.json")]
    if not evals:
        sys.exit(f"{rep_dir / 'reps'} holds no evaluations (*/eval.json)")
    shutil.rmtree(out, ignore_errors=True)
    for task in tasks:
        (out / task).mkdir(parents=True)
        for name in ("report.md", "representation.dat"):
            shutil.copy(rep_dir / f"rep-{task}" / name, out / task / name)
    write_manifest(out, "for r in vcl/runs/*/; do lenlab eval $r --representation-stats --out "
                   "DIR/reps/$(basename $r); done; lenlab representation DIR/reps/TASK-* --out "
                   "DIR/rep-TASK", rep_dir,
                   {"evaluations": len(evals),
                    "lenlab_revision": sorted({e.get("git_revision", "unknown") for e in evals})})


def snapshot_torch_odds(odds_dir: Path, out: Path):
    """`python3 tools/torch_reference odds --out DIR -- FLAGS` (tools/torch_reference/odds.py):
    odds.md (per arm over seeds, the tests) and odds.csv (per seed, arm and test length); the
    command with its flags is read from the lenlab runs' manifests."""
    for name in ("odds.md", "odds.csv"):
        if not (odds_dir / name).is_file():
            sys.exit(f"{odds_dir} has no {name}: not a finished `tools/torch_reference odds` "
                     "folder")
    runs = [json.loads(p.read_text()) for p in sorted(odds_dir.glob("s*/lenlab/manifest.json"))]
    if not runs:
        sys.exit(f"{odds_dir} holds no lenlab runs (s*/lenlab/manifest.json)")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for name in ("odds.md", "odds.csv"):
        shutil.copy(odds_dir / name, out / name)
    flags = runs[0]["command_line"].split(" train ", 1)[-1].split(" --seed ")[0]
    seeds = sorted(int(r["config"]["seed"]) for r in runs)
    seeds_text = f"{seeds[0]}..{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) \
        else ",".join(map(str, seeds))
    # The PyTorch arms' sources, from their names (torch-INIT-init-DATA-data) in odds.csv.
    with open(out / "odds.csv") as f:
        arms = {line.split(",")[1] for line in f.readlines()[1:] if line.strip()}
    sources = [a[len("torch-"):-len("-data")].split("-init-") for a in arms if a != "lenlab"]
    inits = ",".join(sorted({i for i, _ in sources}))
    data = ",".join(sorted({d for _, d in sources}))
    write_manifest(out, f"python3 tools/torch_reference odds --out DIR --seeds {seeds_text} "
                   f"--inits {inits} --data {data} -- {flags}",
                   odds_dir, {"seeds": len(runs),
                              "lenlab_revision": sorted({r.get("git_revision", "unknown")
                                                         for r in runs})})


# The `lenlab run` folders the docs quote: docs/data/NAME -> (config, extra flags[, EXTRAS kept]).
EXPERIMENTS = {
    "methods": ("configs/methods.toml", "", ("figures",)),
    "positions": ("configs/positions.toml", ""),
    "positions-alignment": ("configs/positions.toml",
                            "--figures alignment_passkey,alignment_passkey_trained,alignment_recall,"
                            "alignment_recall_trained --seeds-until-decided 12"),
    # Sinusoidal positions with the token embedding times sqrt(d_model) (Vaswani et al. 3.4).
    "positions-sinusoidal": ("configs/positions.toml",
                             "--figures sinusoidal_scale_passkey,sinusoidal_scale_copy"),
    # The figures whose baselines fit their range, grown to 12 seeds where 5 cannot decide.
    "positions-12": ("configs/positions.toml",
                     "--figures pe_passkey,pe_length,rope_ext_markov,rope_ext_passkey,"
                     "t5_max_distance,t5_max_distance_markov --seeds-until-decided 12"),
    # The four comparison figures (every method against plain on one task) at 12 seeds, where 5
    # cannot decide anything among the report's comparisons.
    "methods-12": ("configs/methods.toml",
                   "--figures compare_length,compare_sum,compare_passkey,compare_markov "
                   "--seeds 12",
                   ("figures",)),
    "dependence": ("configs/dependence.toml", "", ("figures",)),
    "tokens": ("configs/tokens.toml", ""),
    "chomsky-quick": ("configs/chomsky-quick.toml", ""),
    "chomsky-steps": ("configs/chomsky-steps.toml", ""),
    # The quick suite's many-token answers scored teacher-forced and greedily decoded.
    "greedy": ("configs/greedy.toml", "", ("figures",)),
    "text-methods-quick": ("configs/text-methods-quick.toml", "--seeds 3"),
    # Paper 002's setup on text with T5's untrained buckets mapped onto trained ones, beside it.
    "text-t5": ("configs/text-methods-quick.toml",
                "--figures text_t5_temperature,text_t5_temperature_trained --seeds 3"),
    # Sinusoidal positions on text, the token embedding unscaled and times sqrt(d_model).
    "text-sinusoidal": ("configs/text-methods-quick.toml",
                        "--figures text_sinusoidal_scale --seeds 3"),
    "text-quick": ("configs/text-quick.toml", "--seeds 3", ("figures",)),
    "passkey-odds": ("configs/passkey_odds.toml", "--seeds-until-decided 12",
                     ("figures", "seed_odds.txt")),
    "vcl": ("configs/vcl.toml", "", ("figures",)),
    # 004-C1 on all six encodings, 12 seeds (the whole config is 420 runs at 5).
    "vcl-c1": ("configs/vcl.toml",
               "--figures c1_nope,c1_rope,c1_alibi,c1_t5,c1_kerple,c1_fire,c1_nope_vs_oracle,"
               "c1_rope_vs_oracle,c1_alibi_vs_oracle,c1_t5_vs_oracle,c1_kerple_vs_oracle,"
               "c1_fire_vs_oracle --seeds 12", ("figures",)),
    # 004-C2 and C3 on RoPE, 12 seeds, each into a copy of the folder before it.
    "vcl-c2": ("configs/vcl.toml", "--figures c2_rope_vs_oracle --seeds 12", ("figures",)),
    "vcl-c3": ("configs/vcl.toml", "--figures c3_pretrained,c3_tuned --seeds 12", ("figures",)),
    # 004-C1 on passkey, all six encodings and their oracle comparisons, 12 seeds.
    "vcl-passkey": ("configs/vcl.toml",
                    "--figures passkey_c1_nope,passkey_c1_rope,passkey_c1_alibi,passkey_c1_t5,"
                    "passkey_c1_kerple,passkey_c1_fire,passkey_c1_nope_vs_oracle,"
                    "passkey_c1_rope_vs_oracle,passkey_c1_alibi_vs_oracle,passkey_c1_t5_vs_oracle,"
                    "passkey_c1_kerple_vs_oracle,passkey_c1_fire_vs_oracle --seeds 12",
                    ("figures",)),
    # Randomized positions with every encoding that reads positions, on passkey, 12 seeds.
    "randomized-positions": ("configs/randomized_positions.toml", "--seeds 12", ("figures",)),
    # The core suite's five tasks, two of its seeds: --until-fit and [select] measured.
    "chomsky-core-two-seeds": ("configs/chomsky-core.toml",
                               "--figures even-pairs,parity,reverse,duplicate-string,"
                               "missing-duplicate-string --seeds 2", ("figures",)),
    # The core suite whole: its five tasks at its five seeds, with every run's record
    # (run_records): a later machine resumes the config from them.
    "chomsky-core": ("configs/chomsky-core.toml",
                     "",
                     ("figures", "runs")),
}

def snapshot_stream(stream_dir: Path, out: Path):
    """LM-Infinite's streaming test on the text-quick runs (scripts/stream_study.sh): each
    stream's stream.json (the whole stream's cross-entropy, peak resident memory, time) and
    stream.csv (per chunk of positions)."""
    streams = sorted(p.parent for p in stream_dir.glob("*/stream.json"))
    if not streams:
        sys.exit(f"{stream_dir} holds no finished stream (*/stream.json): run "
                 "scripts/stream_study.sh first")
    shutil.rmtree(out, ignore_errors=True)
    for s in streams:
        (out / s.name).mkdir(parents=True)
        for name in ("stream.json", "stream.csv"):
            shutil.copy(s / name, out / s.name / name)
    revisions = sorted({json.loads((s / "stream.json").read_text()).get("git_revision", "unknown")
                        for s in streams})
    write_manifest(out, "scripts/stream_study.sh build/release/lenlab TEXT DIR", stream_dir,
                   {"streams": len(streams), "lenlab_revision": revisions})


# SOURCE -> its maker(DIR, docs/data/SOURCE); the experiments' also take log=FILE.
MAKERS = {"reproduce": snapshot_reproduce, "course": snapshot_course, "theory": snapshot_theory,
          **{name: experiment_maker(*how) for name, how in EXPERIMENTS.items()},
          "vcl-representation": snapshot_vcl_representation,
          "stream": snapshot_stream,
          # tools/torch_reference odds folders, one per encoding (docs/torch_reference.md)
          "torch-odds-rope": snapshot_torch_odds, "torch-odds-nope": snapshot_torch_odds,
          "torch-odds-rope-more": snapshot_torch_odds,
          "torch-odds-nope-init": snapshot_torch_odds}
