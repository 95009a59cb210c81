#!/usr/bin/python3
"""Checks that every measured number the docs quote is in a committed snapshot of the runs.

    scripts/check_docs.py [--root DIR]                      check the docs (seconds; CI runs it)
    scripts/check_docs.py --snapshot reproduce RUN_DIR      refresh docs/data/reproduce/ from a
                                                            `lenlab reproduce --out RUN_DIR` folder
    scripts/check_docs.py --snapshot course WORK_DIR        refresh docs/data/course/ from
                                                            `scripts/check_course_answers.py --keep WORK_DIR`
    scripts/check_docs.py --snapshot theory LENLAB          refresh docs/data/theory/ by running
                                                            LENLAB theory (build/release/lenlab)

A covered doc (COVERED below) says where its numbers come from with markers, each in force until
the next one:

    <!-- numbers: from reproduce/report.md reproduce/line_means.csv -->
        every number below must be in one of these files or folders of docs/data/
    <!-- numbers: not checked: REASON -->
        not checked against results, for the reason given (timings that vary with the machine,
        settings, closed forms computed by `lenlab theory`, another snapshot not taken yet)

Lines before a file's first marker are not checked; a covered file without a marker is an error.
A number the docs compute from snapshot values (a ratio, a percentage) says how, right after it on
the same line: `0.140 <!-- derived: 0.764181 / 5.44396 -->`; each decimal operand must then be in
the snapshot and the arithmetic must round to the number quoted.

What counts as a quoted number: a decimal, an integer or scientific notation (2.5e-6, 1.52e+03,
2.4e3) in prose, tables and unlabelled fenced blocks (printed output). Left out by rule, because
they are not measurements: ```sh / ```toml (any labelled) fenced blocks, `inline code`, link
targets, HTML comments, headings, dates (2026-11-25), names with digits (fig1b, d_model, x^-0.25,
1/√), ranges' ends (1..50), version numbers (1.6.32), and a number right after a label word
("Figure 3b", "Theorem 2", "issue 13", "et al. 2023"; LABEL_WORDS).

A quoted number matches a snapshot value that rounds to it at the quoted precision (669 matches
668.9; 2.5e-6 matches 2.49e-06; 0.922 matches 0.9217; an integer's trailing zeros are not
precision: 1800 matches 1843), compared without sign. The check fails,
naming file:line, the number and the nearest snapshot value, on any quoted number that matches
none.
"""

import argparse
import ast
import bisect
import csv
import datetime
import json
import math
import operator
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The docs whose numbers come from runs that take minutes here (see docs/data/README.md).
COVERED = [
    "README.md",
    "docs/reproduction.md",
    "docs/theory.md",
    "docs/course/README.md",
    "docs/course/01_what_is_length_generalization.md",
    "docs/course/02_positional_encodings.md",
    "docs/course/03_output_reparameterization.md",
    "docs/course/04_theory.md",
    "docs/course/05_token_tasks.md",
    "docs/course/06_training_methods.md",
    "docs/course/07_inference_methods.md",
    "docs/course/teacher_answers.md",
]

MARKER = re.compile(r"<!--\s*numbers:\s*(.*?)\s*-->", re.S)
FENCE_OPEN = re.compile(r"^\s*```(\S*)\s*$")
HEADING = re.compile(r"^\s*#{1,6}\s")
# Labels, not measurements: the number right after one of these words names a thing.
LABEL_WORDS = ("figure", "figures", "fig.", "theorem", "section", "sections", "eq.", "eqs.",
               "appendix", "appendices", "issue", "issues", "lesson", "lessons", "exercise",
               "paper", "papers", "al.", "step", "part", "table", "python", "pytorch", "c++")
NUMBER = re.compile(r"(?<![\w.^/\\])(?<!\^-)(?<!\^−)(\d+(?:\.\d+)?)(?:([eE])([-+−]?\d+))?(?![\w/²³]|\.\d|\.\.)")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
STRIP = [
    re.compile(r"<!--.*?-->", re.S),           # comments (markers included)
    re.compile(r"`[^`]*`"),                     # inline code: commands, flags, file names
    re.compile(r"\]\([^)]*\)"),                 # link and image targets
    DATE,
]
DERIVED = re.compile(r"<!--\s*derived:\s*(.*?)\s*-->")
ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.Div: operator.truediv, ast.Pow: operator.pow}
SNAPSHOT_VALUE = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


class Quoted:
    """A number as the docs wrote it: its value and the half-unit of its last digit."""

    def __init__(self, text: str, mantissa: str, exponent: str):
        self.text = text
        exp = int(exponent.replace("−", "-")) if exponent else 0
        if "." in mantissa:
            decimals = len(mantissa.split(".")[1])
        else:  # 1800 is two significant digits, 4000 one: trailing zeros are not precision
            decimals = -(len(mantissa) - len(mantissa.rstrip("0"))) if mantissa != "0" else 0
        self.value = float(mantissa) * 10.0 ** exp
        self.tolerance = 0.5 * 10.0 ** (exp - decimals) * (1 + 1e-9)


def blank(pattern, line: str) -> str:
    """The line with each match of pattern turned into as many spaces (offsets kept)."""
    return pattern.sub(lambda m: " " * len(m.group(0)), line)


def quoted_numbers(line: str):
    """(start, end, Quoted) for each quoted number of a line, by the rules above."""
    for pattern in STRIP:
        line = blank(pattern, line)
    for m in NUMBER.finditer(line):
        before = line[: m.start()].rstrip().lower()
        if any(before.endswith(w) for w in LABEL_WORDS):
            continue
        yield m.start(), m.end(), Quoted(m.group(0), m.group(1), m.group(3))


def evaluate(expression: str) -> tuple:
    """(value, operands) of a derivation's arithmetic: numbers, + - * / ** and parentheses."""
    tree = ast.parse(expression, mode="eval")
    operands = []

    def value(node):
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            operands.append(ast.get_source_segment(expression, node))
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = value(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
            return ARITHMETIC[type(node.op)](value(node.left), value(node.right))
        raise ValueError(f"'{expression}' is not plain arithmetic (numbers, + - * / **, ())")

    return value(tree), operands


class Snapshot:
    """Every number of a set of snapshot files, sorted by magnitude."""

    def __init__(self, data: Path, names):
        self.names = names
        values = []
        for name in names:
            path = data / name
            files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
            if not path.exists():
                raise FileNotFoundError(f"the snapshot {path} named by a marker does not exist")
            for f in files:
                for token in SNAPSHOT_VALUE.findall(f.read_text(errors="replace")):
                    v = abs(float(token))
                    if math.isfinite(v):
                        values.append(v)
        self.values = sorted(values)

    def nearest(self, x: float):
        i = bisect.bisect_left(self.values, x)
        near = [self.values[j] for j in (i - 1, i) if 0 <= j < len(self.values)]
        return min(near, key=lambda v: abs(v - x)) if near else None

    def holds(self, q: Quoted) -> bool:
        i = bisect.bisect_left(self.values, abs(q.value) - q.tolerance)
        return i < len(self.values) and self.values[i] <= abs(q.value) + q.tolerance


def check_derived(where: str, q: Quoted, expression: str, snapshot) -> list:
    """A number the docs derive from snapshot values: each decimal operand in the snapshot
    (integers are constants: 100 for a percentage, 1 in 1 - x), the arithmetic rounding to the
    number quoted."""
    try:
        result, operands = evaluate(expression)
    except (SyntaxError, ValueError, ZeroDivisionError) as e:
        return [f"{where}: {q.text}'s derivation '{expression}': {e}"]
    problems = []
    for text in operands:
        m = NUMBER.fullmatch(text)
        if not m or not ("." in text or "e" in text.lower()):
            continue
        if not snapshot.holds(Quoted(text, m.group(1), m.group(3))):
            problems.append(f"{where}: {text}, in the derivation of {q.text}, is in none of "
                            f"{', '.join(snapshot.names)}")
    if abs(abs(result) - abs(q.value)) > q.tolerance:
        problems.append(f"{where}: {q.text} is not {expression} = {result:.6g}")
    return problems


class Found:
    """One quoted number the check compares: where it is, and what it must match."""

    def __init__(self, line: int, start: int, end: int, quoted: Quoted, snapshot, derivation):
        self.line, self.start, self.end, self.quoted = line, start, end, quoted
        self.snapshot = snapshot        # the marker's Snapshot
        self.derivation = derivation    # the 'derived:' arithmetic after it, or None


def scan(path: Path, rel: str, data: Path, cache: dict, problems: list):
    """Yields a Found for each checked number of one covered doc; appends to problems what is
    wrong with its markers."""
    snapshot, saw_marker, fence = None, False, None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        for m in MARKER.finditer(line):
            saw_marker = True
            spec = m.group(1)
            snapshot = None
            if spec.startswith("from "):
                names = tuple(spec[5:].split())
                if names not in cache:
                    try:
                        cache[names] = Snapshot(data, names)
                    except FileNotFoundError as e:
                        problems.append(f"{rel}:{number}: {e}")
                        cache[names] = None
                snapshot = cache[names]
            elif not re.match(r"not checked:\s*\S", spec):
                problems.append(f"{rel}:{number}: marker '{spec}' is neither 'from FILES...' "
                                "nor 'not checked: REASON'")
        opened = FENCE_OPEN.match(line)
        if opened:
            fence = None if fence is not None else opened.group(1)
            continue
        if snapshot is None or fence or HEADING.match(line):
            continue  # a labelled fence holds commands or config, not output
        quoted = list(quoted_numbers(line))
        derived = {}  # the quoted number's start -> its derivation from snapshot values
        for m in DERIVED.finditer(line):
            before = [start for start, end, _ in quoted if end <= m.start()]
            if not before:
                problems.append(f"{rel}:{number}: a 'derived:' comment with no number before it")
                continue
            derived[max(before)] = m.group(1)
        for start, end, q in quoted:
            yield Found(number, start, end, q, snapshot, derived.get(start))
    if not saw_marker:
        problems.append(f"{rel}: a covered doc without a '<!-- numbers: ... -->' marker")


def check_file(path: Path, rel: str, data: Path, cache: dict):
    """(checked count, problems) for one covered doc."""
    problems, checked = [], 0
    for f in scan(path, rel, data, cache, problems):
        checked += 1
        where = f"{rel}:{f.line}"
        if f.derivation is not None:
            problems += check_derived(where, f.quoted, f.derivation, f.snapshot)
        elif not f.snapshot.holds(f.quoted):
            near = f.snapshot.nearest(abs(f.quoted.value))
            problems.append(f"{where}: {f.quoted.text} is in none of "
                            f"{', '.join(f.snapshot.names)} (nearest there: "
                            f"{'none' if near is None else format(near, '.6g')})")
    return checked, problems


def check(root: Path) -> int:
    data = root / "docs" / "data"
    cache, total, problems = {}, 0, []
    for rel in COVERED:
        n, p = check_file(root / rel, rel, data, cache)
        total += n
        problems += p
    for p in problems:
        print(p)
    print(f"check_docs: {total} quoted numbers in {len(COVERED)} docs checked against "
          f"{data.relative_to(root)}/: {len(problems)} problem(s)")
    return 1 if problems else 0


# --- refreshing a snapshot ------------------------------------------------------------------------

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
                        if p.is_file() and p.name != "SNAPSHOT.json"),
    }
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


def snapshot_reproduce(run_dir: Path, out: Path):
    """report.md, config.toml and each line's mean over seeds; not the per-run rows (megabytes)."""
    for name in ("report.md", "config.toml", "selection.json"):
        if not (run_dir / name).is_file():
            sys.exit(f"{run_dir} has no {name}: not a finished `lenlab reproduce --out` folder")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for name in ("report.md", "config.toml", "selection.json"):
        shutil.copy(run_dir / name, out / name)
    line_means(run_dir, out / "line_means.csv")
    revisions = set()
    for manifest in run_dir.glob("runs/*/manifest.json"):
        revisions.add(json.loads(manifest.read_text()).get("git_revision", "unknown"))
    write_manifest(out, "build/release/lenlab reproduce --out DIR", run_dir,
                   {"runs": len(list(run_dir.glob("runs/*/manifest.json"))),
                    "lenlab_revision": sorted(revisions)})


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the repository (or a copy of its docs) to check")
    parser.add_argument("--snapshot", nargs=2, metavar=("SOURCE", "DIR"),
                        help="refresh docs/data/SOURCE/ from DIR; SOURCE: reproduce, course or theory")
    args = parser.parse_args()
    if args.snapshot:
        source, folder = args.snapshot
        makers = {"reproduce": snapshot_reproduce, "course": snapshot_course,
                  "theory": snapshot_theory}
        if source not in makers:
            print(f"check_docs: unknown snapshot '{source}'; valid choices: "
                  f"{', '.join(makers)}", file=sys.stderr)
            return 2
        makers[source](Path(folder).resolve(), args.root / "docs" / "data" / source)
        print(f"wrote {args.root / 'docs' / 'data' / source}; now run scripts/check_docs.py")
        return 0
    return check(args.root)


if __name__ == "__main__":
    sys.exit(main())
