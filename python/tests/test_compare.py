"""lenlab.compare(folder) / Experiment.compare(): report.md's method comparison as a table, the
same verdicts as the report of the same folder."""

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import lenlab

from support import TINY_MODEL_TOML


def compared_config(path: Path) -> Path:
    """One compared figure (baseline NoPE) of three tiny lines, tested to 4x l_train and past it:
    a main comparison and two test ranges. The mean task, which 150 steps fit inside 1..3 (the
    in-range gate lets every run in)."""
    path.write_text("""
seeds = [1, 2, 3]
[defaults]
task = "mean"
l_train = 3
l_test = 14
steps = 150
""" + TINY_MODEL_TOML + """[figures.p]
vary = "pe"
values = ["nope", "alibi", "rope"]
baseline = "nope"
""")
    return path


def report_verdicts(report: str) -> dict:
    """{(figure, method): word} from report.md's "Verdicts:" list."""
    verdicts, figure = {}, None
    section = report.split("\nVerdicts:\n", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        if line.startswith("**") or line.startswith("| "):  # the by-range tables follow
            break
        if m := re.match(r"^- \*\*(.+?)\*\*: ", line):
            figure = m.group(1)
        elif m := re.match(r"^  - (.+?): \*\*(.+?)\*\*", line):
            verdicts[(figure, m.group(1))] = m.group(2)
    return verdicts


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    return lenlab.reproduce(compared_config(tmp / "c.toml"), out=tmp / "exp", jobs=2,
                            progress=False)


def test_the_tables_verdicts_are_the_reports(experiment):
    df = lenlab.compare(experiment.dir)
    main = df[df["main"] & ~df["is_baseline"]]
    assert len(main) == 2
    from_report = report_verdicts(experiment.report)
    assert from_report == {(f, m): v for f, m, v in
                           zip(main["figure"], main["method"], main["verdict"])}
    assert set(main["verdict"]) <= {"helps", "hurts", "no detectable difference", "not judged"}
    # Three seeds cannot decide anything (the smallest exact p is 0.25).
    assert set(main["verdict"]) == {"no detectable difference"}
    assert (main["seeds_paired"] == 3).all() and (main["n_seeds"] == 3).all()
    assert (main["p_adjusted"] >= main["p_wilcoxon"]).all()
    # The main comparison and two test ranges, each with every line; the baseline marked.
    assert list(df["range"].unique()) == ["beyond l_train", "(1×, 4×] l_train",
                                          "(4×, 8×] l_train"]
    base = df[df["is_baseline"]]
    assert len(base) == 3 and set(base["verdict"]) == {"baseline"} and set(base["method"]) == {"nope"}
    assert base["p_adjusted"].isna().all() and (base["rank"] >= 1).all()
    assert set(df["pe"]) == {"nope", "alibi", "rope"} and set(df["task"]) == {"mean"}
    assert set(df["metric"]) == {"mse"}
    assert math.isinf(df["hi"].iloc[0]) and df["lo"].iloc[0] == 1
    assert (df["reason"] == "").all()
    # The in-range gate: its rule on every row, and which seeds it left out (none here).
    assert df["in_range_rule"].str.startswith("MSE ≤").all()
    assert (df["seeds_not_fit"] == "").all()


def test_experiment_compare_and_the_columns_without_pandas(experiment, monkeypatch):
    df = experiment.compare()
    assert df.equals(lenlab.compare(experiment.dir))
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    table = lenlab.compare(experiment.dir)
    assert isinstance(table, dict) and list(table) == list(df.columns)
    assert table["verdict"].dtype == object and table["n_seeds"].dtype.kind == "i"
    assert np.array_equal(table["p_wilcoxon"], df["p_wilcoxon"].to_numpy(), equal_nan=True)


def test_a_folder_that_is_no_experiment_is_refused(tmp_path):
    with pytest.raises(lenlab.UsageError, match="is not an experiment folder"):
        lenlab.compare(tmp_path)
