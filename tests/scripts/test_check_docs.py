"""scripts/check_docs.py: the docs pass against docs/data/, an edited digit in a checked number
fails naming its file, line and number, and the rules leave out what is not a measurement.

    /usr/bin/python3 -m pytest -q tests/scripts/test_check_docs.py   (ctest runs it)
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import check_docs  # noqa: E402

SCRIPT = ROOT / "scripts" / "check_docs.py"


def run(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)],
                          capture_output=True, text=True)


def snapshot_argv(repo: Path, name: str, folder: Path) -> list:
    """check_docs.py's command refreshing repo's docs/data/NAME/ from folder."""
    return [sys.executable, str(SCRIPT), "--root", str(repo), "--snapshot", name, str(folder)]


@pytest.fixture
def docs_copy(tmp_path: Path) -> Path:
    """The covered docs and docs/data/, copied: what the check reads, nothing else."""
    for rel in check_docs.COVERED:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    shutil.copytree(ROOT / "docs" / "data", tmp_path / "docs" / "data")
    return tmp_path


def edit_one_digit(root: Path, rel: str):
    """Changes one digit of the first checked decimal (a measurement, where integers are often
    settings; not a derived one) whose edited value no snapshot value rounds to; returns (line
    number, edited text)."""
    path = root / rel
    lines = path.read_text().splitlines(keepends=True)
    problems = []
    for f in check_docs.scan(path, rel, root / "docs" / "data", {}, problems):
        if f.derivation is not None or not re.search(r"[.eE]", f.quoted.text):
            continue
        number, start, end, text, snapshot = f.line, f.start, f.end, f.quoted.text, f.snapshot
        digits = [i for i, ch in enumerate(text) if ch.isdigit()]
        last = max(i for i in digits if "e" not in text[:i].lower())
        for bump in (5, 3, 7, 1):
            edited = text[:last] + str((int(text[last]) + bump) % 10) + text[last + 1:]
            m = check_docs.NUMBER.fullmatch(edited)
            if not snapshot.holds(check_docs.Quoted(edited, m.group(1), m.group(3))):
                line = lines[number - 1]
                lines[number - 1] = line[:start] + edited + line[end:]
                path.write_text("".join(lines))
                return number, edited
    raise AssertionError(f"no checked number of {path} could be edited into a failing one")


def test_the_docs_numbers_are_in_the_snapshot():
    r = run(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"check_docs: \d+ quoted numbers in \d+ docs checked", r.stdout)


@pytest.mark.parametrize("rel", ["docs/reproduction.md", "docs/theory.md",
                                 "docs/course/teacher_answers.md",
                                 "docs/course/04_theory.md"])
def test_an_edited_digit_fails_naming_file_line_and_number(docs_copy: Path, rel: str):
    assert run(docs_copy).returncode == 0
    line, edited = edit_one_digit(docs_copy, rel)
    r = run(docs_copy)
    assert r.returncode == 1, r.stdout
    assert f"{rel}:{line}: {edited} is in none of" in r.stdout, r.stdout
    assert "1 problem(s)" in r.stdout


def test_most_single_digit_edits_are_caught():
    """Every other last digit of every checked decimal: a snapshot value may round to the edited
    number by chance (the denser the files a marker names, the likelier), so not every edit can
    fail; this keeps the markers narrow enough that most do (82 % when written)."""
    edits = caught = 0
    for rel in check_docs.COVERED:
        for f in check_docs.scan(ROOT / rel, rel, ROOT / "docs" / "data", {}, []):
            text = f.quoted.text
            if f.derivation is not None or not re.search(r"[.eE]", text):
                continue
            last = max(i for i, ch in enumerate(text) if ch.isdigit() and
                       "e" not in text[:i].lower())
            for digit in set("0123456789") - {text[last]}:
                edited = text[:last] + digit + text[last + 1:]
                m = check_docs.NUMBER.fullmatch(edited)
                edits += 1
                caught += not f.snapshot.holds(check_docs.Quoted(edited, m.group(1), m.group(3)))
    assert edits > 1000 and caught / edits >= 0.75, f"{caught} of {edits} edits caught"


def test_a_derived_number_is_checked_by_its_arithmetic_and_operands(docs_copy: Path):
    theory = docs_copy / "docs" / "theory.md"
    text = theory.read_text()
    assert "22% <!-- derived: 100 * (1 - 6.44786 / 8.25) -->" in text
    theory.write_text(text.replace("22% <!-- derived", "23% <!-- derived"))
    r = run(docs_copy)
    assert r.returncode == 1 and "23 is not 100 * (1 - 6.44786 / 8.25) = 21.8" in r.stdout, r.stdout
    theory.write_text(text.replace("(1 - 6.44786 / 8.25)", "(1 - 6.44786 / 8.35)"))
    r = run(docs_copy)
    assert r.returncode == 1 and "8.35, in the derivation of 22, is in none of" in r.stdout, \
        r.stdout


def test_markers_are_required_and_must_name_what_exists(docs_copy: Path):
    course = docs_copy / "docs" / "course" / "01_what_is_length_generalization.md"
    text = course.read_text()
    course.write_text(check_docs.MARKER.sub("", text))
    r = run(docs_copy)
    assert "01_what_is_length_generalization.md: a covered doc without a" in r.stdout, r.stdout
    course.write_text(text.replace("<!-- numbers: from ", "<!-- numbers: form ", 1))
    assert "is neither 'from FILES...' nor 'not checked: REASON'" in run(docs_copy).stdout
    course.write_text(text.replace("<!-- numbers: from ", "<!-- numbers: from course/99/x.md ", 1))
    assert "course/99/x.md named by a marker does not exist" in run(docs_copy).stdout


def test_a_marker_may_name_a_section_of_a_file(tmp_path: Path):
    (tmp_path / "r.md").write_text("# Report\n\n## Token tasks\n\n| nope | 0.497 |\n\n"
                                   "### Figure a_b: x\n\n0.25\n\n## Method comparison\n\n"
                                   "| nope | 0.774 |\n")
    section = check_docs.Snapshot(tmp_path, ("r.md#method-comparison",)).values
    assert section == [0.774]
    assert check_docs.Snapshot(tmp_path, ("r.md#token-tasks",)).values == [0.25, 0.497]
    assert check_docs.Snapshot(tmp_path, ("r.md#figure-a_b",)).values == [0.25]
    assert check_docs.Snapshot(tmp_path, ("r.md",)).values == [0.25, 0.497, 0.774]
    with pytest.raises(FileNotFoundError, match="no heading '#figures'"):
        check_docs.Snapshot(tmp_path, ("r.md#figures",))


def numbers(line: str) -> list:
    return [q.text for _, _, q in check_docs.quoted_numbers(line)]


def test_what_is_not_a_measurement_is_left_out():
    assert numbers("`--steps 2000` in fig1b and Figure 3b, issue 13, Ruoss et al. 2023") == []
    assert numbers("on 2026-11-25 with uPlot 1.6.32, lengths 1..50, x^-0.25 and 1/√y") == []
    assert numbers("see [it](docs/x2.md#3-a) <!-- 4.5 -->") == []
    assert numbers("MSE 2.5e-6 (2.49e-06), 669 and 1.52e+03, 2.4e3; 0.922.") == \
        ["2.5e-6", "2.49e-06", "669", "1.52e+03", "2.4e3", "0.922"]


def test_precision_is_the_quoted_one():
    snap = check_docs.Snapshot.__new__(check_docs.Snapshot)
    snap.names, snap.values = ("x",), sorted([668.9, 2.49e-06, 0.9217, 1517.0])

    def holds(text):
        m = check_docs.NUMBER.fullmatch(text)
        return snap.holds(check_docs.Quoted(text, m.group(1), m.group(3)))

    assert holds("669") and holds("2.5e-6") and holds("0.922") and holds("1.52e+03")
    assert not holds("668") and not holds("2.4e-6") and not holds("0.921") and not holds("672")
    assert holds("670") and holds("1500") and not holds("1600")  # trailing zeros: not precision
    assert not holds("668.8")  # more digits than the snapshot's value supports


def test_snapshot_of_a_reproduce_folder(tmp_path: Path):
    run_dir = tmp_path / "figures"
    (run_dir / "runs" / "a").mkdir(parents=True)
    (run_dir / "report.md").write_text("| nope | 3 | 2.49e-06 |\n")
    (run_dir / "config.toml").write_text("steps = 2000\n")
    (run_dir / "selection.json").write_text("{}\n")
    (run_dir / "runs" / "a" / "manifest.json").write_text('{"git_revision": "abc1234"}')
    (run_dir / "fig1a.csv").write_text(
        "figure,line,run_id,length,mse\n1a,nope,r1,11,1.0\n1a,nope,r2,11,3.0\n")
    repo = tmp_path / "repo"
    r = subprocess.run([sys.executable, str(SCRIPT), "--root", str(repo),
                        "--snapshot", "reproduce", str(run_dir)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = repo / "docs" / "data" / "reproduce"
    assert (out / "line_means.csv").read_text().splitlines() == [
        "figure,line,length,seeds,mean_mse,min_mse,max_mse", "1a,nope,11,2,2,1,3"]
    manifest = json.loads((out / "SNAPSHOT.json").read_text())
    assert manifest["runs"] == 1 and manifest["lenlab_revision"] == ["abc1234"]
    assert set(manifest) >= {"command", "lenlab_revision", "machine", "date_utc", "files"}
    r = subprocess.run([sys.executable, str(SCRIPT), "--root", str(repo),
                        "--snapshot", "results", str(run_dir)], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown snapshot 'results'; valid choices: reproduce, course, " \
        "theory, methods, positions" in r.stderr


def test_snapshot_of_the_representation_reports(tmp_path: Path):
    """vcl-representation keeps each task's report.md and representation.dat (not points.csv, a
    row per point), counts the evaluations read, and refuses a folder missing a task's report."""
    rep = tmp_path / "rep"
    for task in ("markov", "passkey"):
        (rep / f"rep-{task}").mkdir(parents=True)
        (rep / f"rep-{task}" / "report.md").write_text(f"| all | 4 | +0.25 | {task}\n")
        (rep / f"rep-{task}" / "representation.dat").write_text("# rope\n16 0 0\n")
        (rep / f"rep-{task}" / "points.csv").write_text("run,length\n")
        (rep / "reps" / f"{task}-1").mkdir(parents=True)
        (rep / "reps" / f"{task}-1" / "eval.json").write_text('{"git_revision": "abc1234"}')
    repo = tmp_path / "repo"
    argv = snapshot_argv(repo, "vcl-representation", rep)
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = repo / "docs" / "data" / "vcl-representation"
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "SNAPSHOT.json", "markov/report.md", "markov/representation.dat", "passkey/report.md",
        "passkey/representation.dat"]
    assert "passkey" in (out / "passkey" / "report.md").read_text()
    manifest = json.loads((out / "SNAPSHOT.json").read_text())
    assert manifest["evaluations"] == 2 and manifest["lenlab_revision"] == ["abc1234"]
    (rep / "rep-passkey" / "report.md").unlink()
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode != 0 and "rep-passkey has no report.md" in r.stderr, r.stderr


def test_snapshot_of_an_experiment_folder_keeps_its_extras(tmp_path: Path):
    """passkey-odds keeps its figures' data (not the attention plots, nor another config's
    figures) and seed_odds.py's printout beside report.md, and run.log from --log (its estimate
    line and what follows the first finished round)."""
    run_dir = tmp_path / "odds"
    (run_dir / "runs" / "a").mkdir(parents=True)
    for name in ("report.md", "selection.json"):
        (run_dir / name).write_text("x\n")
    (run_dir / "config.toml").write_text('[figures.pe]\nvary = "pe"\n')
    (run_dir / "runs" / "a" / "manifest.json").write_text('{"git_revision": "abc1234"}')
    (run_dir / "figpe.dat").write_text("# pe\n64 0.625 0.25 1\n")
    (run_dir / "figpe-bias.dat").write_text("# attention biases\n")
    (run_dir / "figother.dat").write_text("# another config's figure, run into this folder\n")
    (run_dir / "results.csv").write_text(
        "figure,line,seed,length,exact_match\n"
        "pe,rope,1,64,0.25\npe,rope,1,64,0.75\npe,rope,2,64,1\n")
    log = tmp_path / "run.out"
    estimate = "estimated: about 233 MB of memory and 6.9e+14 FLOP, ~45m on 2 CPU workers"
    log.write_text(f"{estimate}\n160 runs to train\nruns 10% ETA 42m39s  18/160 runs\n"
                   "160 runs: 100 trained in 2401.3 s\nreal\t41m02.5s\n")
    repo = tmp_path / "repo"
    r = subprocess.run([sys.executable, str(SCRIPT), "--root", str(repo), "--snapshot",
                        "passkey-odds", str(run_dir), "--log", str(log)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = repo / "docs" / "data" / "passkey-odds"
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["figpe.dat"]
    odds = (out / "seed_odds.txt").read_text().splitlines()
    # seed 1's value is its mean over depths (0.5), seed 2's 1: median and mean 0.75, 2/2 >= 0.5
    assert odds[0] == "scripts/seed_odds.py DIR"
    row = next(line for line in odds if line.startswith("pe "))
    assert row.split()[:6] == ["pe", "rope", "64", "2", "0.75", "0.75"] and "2/2" in row
    assert (out / "run.log").read_text() == (f"{estimate}\n160 runs: 100 trained in 2401.3 s\n"
                                             "real\t41m02.5s\n")
    files = json.loads((out / "SNAPSHOT.json").read_text())["files"]
    assert "figures/figpe.dat" in files and "seed_odds.txt" in files


def test_snapshot_keeps_each_finished_runs_record(tmp_path: Path):
    """chomsky-core keeps every finished run's manifest.json and results.csv (not its weights or
    loss.csv, nor a run still training), and SNAPSHOT.json counts them instead of listing them."""
    run_dir = tmp_path / "core"
    for name in ("report.md", "selection.json"):
        (run_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / name).write_text("x\n")
    (run_dir / "config.toml").write_text('[figures.parity]\nvary = "settings"\n')
    runs = {"done": "completed", "nan": "diverged", "busy": "running"}
    for run, status in runs.items():
        (run_dir / "runs" / run).mkdir(parents=True)
        (run_dir / "runs" / run / "manifest.json").write_text(
            json.dumps({"status": status, "git_revision": "abc1234"}))
        for name in ("loss.csv", "model.safetensors"):
            (run_dir / "runs" / run / name).write_text("weights\n")
        if status != "running":
            (run_dir / "runs" / run / "results.csv").write_text(f"length,score\n41,{run}\n")
    repo = tmp_path / "repo"
    argv = snapshot_argv(repo, "chomsky-core", run_dir)
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = repo / "docs" / "data" / "chomsky-core"
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["done", "nan"]
    assert sorted(p.name for p in (out / "runs" / "done").iterdir()) == ["manifest.json",
                                                                          "results.csv"]
    assert (out / "runs" / "nan" / "results.csv").read_text() == "length,score\n41,nan\n"
    files = json.loads((out / "SNAPSHOT.json").read_text())["files"]
    assert "runs/ (2 runs: manifest.json and results.csv each)" in files
    assert not any(f.startswith("runs/done") for f in files)
    for run in ("done", "nan"):
        (run_dir / "runs" / run / "results.csv").unlink()
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode != 0 and "holds no finished run" in r.stderr, r.stderr


def test_a_table_copied_with_a_rows_marker_is_checked_line_for_line(docs_copy: Path):
    """Rows copied from a report section pass as they are, in any subset; one edited digit in a
    row fails naming the line; the table's numbers are not also checked one by one; a marker with
    no table after it, or naming a heading the file lacks, is an error."""
    report = ROOT / "docs" / "data" / "chomsky-core-two-seeds" / "report.md"
    rows = [line for line in check_docs.sections(report.read_text(),
                                                 "chomsky-hierarchy-suite").splitlines()
            if line.startswith("|")]
    assert len(rows) >= 5
    table = [rows[0], rows[1], rows[3]]  # header, separator and the second task only
    tasks = docs_copy / "docs" / "tasks.md"
    before = run(docs_copy)
    assert before.returncode == 0, before.stdout
    marker = "<!-- rows: from chomsky-core-two-seeds/report.md#chomsky-hierarchy-suite -->"
    text = tasks.read_text()
    tasks.write_text(text + "\n" + marker + "\n" + "\n".join(table) + "\n\nAfter it.\n")
    r = run(docs_copy)
    assert r.returncode == 0, r.stdout
    count = re.compile(r"(\d+) quoted numbers")
    assert count.search(r.stdout).group(1) == count.search(before.stdout).group(1)

    edited = re.sub(r"0\.(\d)(\d)(\d)", lambda m: f"0.{m[1]}{m[2]}{(int(m[3]) + 1) % 10}",
                    table[2], count=1)
    assert edited != table[2]
    tasks.write_text(text + "\n" + marker + "\n" + "\n".join([*table[:2], edited]) + "\n")
    r = run(docs_copy)
    line = len((text + "\n" + marker + "\n").splitlines()) + 3
    assert r.returncode == 1 and f"docs/tasks.md:{line}: a row of a table copied from " \
        "chomsky-core-two-seeds/report.md#chomsky-hierarchy-suite that is not a line of it" \
        in r.stdout and "1 problem(s)" in r.stdout, r.stdout

    tasks.write_text(text + "\n" + marker + "\n\nNo table.\n")
    r = run(docs_copy)
    assert r.returncode == 1 and "marker with no table right after it" in r.stdout, r.stdout
    tasks.write_text(text + "\n" + marker.replace("hierarchy-suite", "nowhere") + "\n" +
                     "\n".join(table) + "\n")
    r = run(docs_copy)
    assert r.returncode == 1 and "has no heading '#chomsky-nowhere'" in r.stdout, r.stdout
