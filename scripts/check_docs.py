#!/usr/bin/python3
"""Checks that every measured number the docs quote is in a committed snapshot of the runs.

    scripts/check_docs.py [--root DIR]                      check the docs (seconds; CI runs it)
    scripts/check_docs.py --snapshot reproduce RUN_DIR   refresh docs/data/reproduce/ from a
                                                         `lenlab reproduce --out RUN_DIR` folder
    scripts/check_docs.py --snapshot course WORK_DIR     refresh docs/data/course/ from
                                                         `check_course_answers.py --keep WORK_DIR`
    scripts/check_docs.py --snapshot theory LENLAB       refresh docs/data/theory/ by running
                                                         LENLAB theory (build/release/lenlab)
    scripts/check_docs.py --snapshot vcl-representation DIR
                                                         refresh docs/data/vcl-representation/
                                                         from `lenlab representation`'s
                                                         DIR/rep-markov, DIR/rep-passkey
    scripts/check_docs.py --snapshot torch-odds-rope DIR refresh docs/data/torch-odds-rope/ from
                                                         a `tools/torch_reference odds` folder
                                                         (torch-odds-nope, -rope-more,
                                                         -nope-init likewise)
    scripts/check_docs.py --snapshot NAME RUN_DIR        refresh docs/data/NAME/ from a
                                                         `lenlab run configs/NAME.toml --out
                                                         RUN_DIR` folder (NAME: methods,
                                                         positions, … : EXPERIMENTS in
                                                         docs_snapshot.py); --log FILE adds
                                                         the command's output's end (its time)

A covered doc (COVERED below) says where its numbers come from with markers, each in force until
the next one:

    <!-- numbers: from reproduce/report.md reproduce/line_means.csv -->
        every number below must be in one of these files or folders of docs/data/; a name
        FILE#FRAGMENT (`positions/report.md#method-comparison`) reads only the sections of a
        markdown FILE under the headings whose anchor starts with FRAGMENT
    <!-- numbers: not checked: REASON -->
        not checked against results, for the reason given (timings that vary with the machine,
        settings, closed forms computed by `lenlab theory`, another snapshot not taken yet)

    <!-- rows: from chomsky-core/report.md#chomsky-hierarchy-suite -->
        the markdown table right after it is copied from that file's section: each of its lines
        (header and separator too) must be, character for character, a line there, in any order
        and any subset; its numbers are checked by that, not one by one, and the marker in
        force before it holds again after the table

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
import math
import operator
import re
import sys
from pathlib import Path

import docs_snapshot

ROOT = Path(__file__).resolve().parents[1]

# The docs whose numbers come from runs that take minutes here (see docs/data/README.md).
COVERED = [
    "README.md",
    "docs/reproduction.md",
    "docs/theory.md",
    "docs/methods.md",
    "docs/tasks.md",
    "docs/run_times.md",
    "docs/torch_reference.md",
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
ROWS_MARKER = re.compile(r"<!--\s*rows:\s*(.*?)\s*-->")
FENCE_OPEN = re.compile(r"^\s*```(\S*)\s*$")
HEADING = re.compile(r"^\s*#{1,6}\s")
# Labels, not measurements: the number right after one of these words names a thing.
LABEL_WORDS = ("figure", "figures", "fig.", "theorem", "section", "sections", "eq.", "eqs.",
               "appendix", "appendices", "issue", "issues", "lesson", "lessons", "exercise",
               "paper", "papers", "al.", "step", "part", "table", "python", "pytorch", "c++")
# A number not inside a name (fig1b, x^-0.25, 1/√), a version (1.6.32) or a range (1..50).
NUMBER = re.compile(r"(?<![\w.^/\\])(?<!\^-)(?<!\^−)(\d+(?:\.\d+)?)(?:([eE])([-+−]?\d+))?"
                    r"(?![\w/²³]|\.\d|\.\.)")
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


def heading_slug(heading: str) -> str:
    """A markdown heading's anchor, as GitHub writes it: "### Figure a_b: C d" ->
    "figure-a_b-c-d"."""
    text = heading.lstrip("#").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def sections(text: str, fragment: str) -> str:
    """The parts of a markdown file under each heading whose anchor starts with `fragment`, each
    to the next heading of the same or a higher level."""
    lines, out, level = text.splitlines(), [], 0
    for line in lines:
        m = re.match(r"(#{1,6})\s", line)
        if m and level and len(m.group(1)) <= level:
            level = 0
        if m and not level and heading_slug(line).startswith(fragment):
            level = len(m.group(1))
        if level:
            out.append(line)
    return "\n".join(out)


class Snapshot:
    """Every number of a set of snapshot files, sorted by magnitude. A name FILE#FRAGMENT reads only
    the sections of FILE (markdown) under the headings whose anchor starts with FRAGMENT
    (`positions/report.md#method-comparison`): the narrower the text, the fewer the chance
    matches."""

    def __init__(self, data: Path, names):
        self.names = names
        values = []
        for name in names:
            name, _, fragment = name.partition("#")
            path = data / name
            files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
            if not path.exists():
                raise FileNotFoundError(f"the snapshot {path} named by a marker does not exist")
            for f in files:
                text = f.read_text(errors="replace")
                if fragment:
                    text = sections(text, fragment)
                    if not text:
                        raise FileNotFoundError(f"the snapshot {path} has no heading "
                                                f"'#{fragment}' named by a marker")
                for token in SNAPSHOT_VALUE.findall(text):
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


def snapshot_lines(data: Path, name: str) -> set:
    """The lines of a snapshot file (FILE#FRAGMENT: of its sections under that heading), each
    stripped of surrounding blanks: what a table copied with a 'rows:' marker is checked against."""
    name, _, fragment = name.partition("#")
    path = data / name
    if not path.is_file():
        raise FileNotFoundError(f"the snapshot file {path} named by a 'rows:' marker does not "
                                "exist")
    text = path.read_text(errors="replace")
    if fragment:
        text = sections(text, fragment)
        if not text:
            raise FileNotFoundError(f"the snapshot {path} has no heading '#{fragment}' named by "
                                    "a 'rows:' marker")
    return {line.strip() for line in text.splitlines()}


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
    copied = None  # after a 'rows:' marker: (its file's name, that file's lines, in the table yet)

    def loaded(key, load, number):
        """What a marker names, read once per check (None, with a problem, if it is missing)."""
        if key not in cache:
            try:
                cache[key] = load()
            except FileNotFoundError as e:
                problems.append(f"{rel}:{number}: {e}")
                cache[key] = None
        return cache[key]

    for number, line in enumerate(path.read_text().splitlines(), 1):
        if copied is not None:
            name, source, started = copied
            if line.startswith("|"):
                if line.strip() not in source:
                    problems.append(f"{rel}:{number}: a row of a table copied from {name} that "
                                    f"is not a line of it: {line.strip()[:120]}")
                copied = (name, source, True)
                continue  # its numbers are checked by the row's match
            if not started:
                problems.append(f"{rel}:{number}: a 'rows: from {name}' marker with no table "
                                "right after it")
            copied = None
        m = ROWS_MARKER.search(line)
        if m:
            saw_marker = True
            spec = m.group(1)
            if not spec.startswith("from ") or len(spec[5:].split()) != 1:
                problems.append(f"{rel}:{number}: marker 'rows: {spec}' is not 'rows: from "
                                "FILE#FRAGMENT' (one file)")
                continue
            name = spec[5:].strip()
            source = loaded(("rows", name), lambda: snapshot_lines(data, name), number)
            if source is not None:
                copied = (name, source, False)
            continue
        for m in MARKER.finditer(line):
            saw_marker = True
            spec = m.group(1)
            snapshot = None
            if spec.startswith("from "):
                names = tuple(spec[5:].split())
                snapshot = loaded(names, lambda: Snapshot(data, names), number)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the repository (or a copy of its docs) to check")
    parser.add_argument("--snapshot", nargs=2, metavar=("SOURCE", "DIR"),
                        help="refresh docs/data/SOURCE/ from DIR; SOURCE: "
                             + ", ".join(docs_snapshot.MAKERS))
    parser.add_argument("--log", type=Path,
                        help="with --snapshot of a `lenlab run` folder: the command's output "
                             "(its last line says the runs and seconds; `time` after it)")
    args = parser.parse_args()
    if args.snapshot:
        source, folder = args.snapshot
        makers = docs_snapshot.MAKERS
        if source not in makers:
            print(f"check_docs: unknown snapshot '{source}'; valid choices: "
                  f"{', '.join(makers)}", file=sys.stderr)
            return 2
        out = args.root / "docs" / "data" / source
        if args.log:
            if source not in docs_snapshot.EXPERIMENTS:
                print(f"check_docs: --log is for `lenlab run` folders "
                      f"({', '.join(docs_snapshot.EXPERIMENTS)}), not '{source}'", file=sys.stderr)
                return 2
            makers[source](Path(folder).resolve(), out, log=args.log.resolve())
        else:
            makers[source](Path(folder).resolve(), out)
        print(f"wrote {args.root / 'docs' / 'data' / source}; now run scripts/check_docs.py")
        return 0
    return check(args.root)


if __name__ == "__main__":
    sys.exit(main())
