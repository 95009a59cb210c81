"""The Python module's long calls: lenlab.reproduce of a tiny config, the GIL released while the
engine trains, and Ctrl-C stopping a run or a reproduction with its finished work kept."""

import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import lenlab

from support import LENLAB, TINY, TINY_MODEL_TOML


def tiny_config(path: Path, steps: int) -> Path:
    """An experiment config of one figure, two tiny runs (NoPE and ALiBi) of `steps` steps."""
    path.write_text(f"""
seeds = [1]
[defaults]
task = "length"
l_train = 3
l_test = 5
steps = {steps}
{TINY_MODEL_TOML}[figures.p]
title = "pe"
vary = "pe"
values = ["nope", "alibi"]
""")
    return path


def test_reproduce_a_tiny_config(tmp_path):
    config = tiny_config(tmp_path / "tiny.toml", steps=40)
    exp = lenlab.reproduce(config, out=tmp_path / "exp", figures="p")
    assert "lenlab" in exp.report
    assert len(exp.runs()) == 2
    assert set(exp.results["pe"]) == {"nope", "alibi"}
    with pytest.raises(lenlab.UsageError, match="unknown figure 'q'"):
        lenlab.reproduce(config, out=tmp_path / "exp", figures="q")


LONG = dict(TINY, steps=200000)  # minutes: only ever interrupted


def test_the_gil_is_released_while_the_engine_trains(tmp_path):
    import threading
    import time

    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        lenlab.train(out=tmp_path / "run", progress=False, **dict(TINY, steps=10000))
    finally:
        done.set()
        counter.join()
    # The counter kept ticking while the engine ran: no gap near the run's length.
    gaps = np.diff(np.array(ticks))
    assert len(ticks) > 10
    assert gaps.max() < 0.5


def interrupted(call: str, started) -> str:
    """Runs `call` (Python source) in a child interpreter, sends it SIGINT (Ctrl-C) once
    started() holds, and returns what it printed; asserts that it caught KeyboardInterrupt and
    stopped well before the work asked for (minutes) would have finished."""
    import signal
    import sys
    import time

    script = ("import lenlab, sys\ntry:\n    " + call + "\nexcept KeyboardInterrupt:\n"
              "    print('interrupted', flush=True)\n    sys.exit(7)\n")
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not started() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    start = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 7, out
    assert "interrupted" in out
    assert time.monotonic() - start < 20
    return out


def test_ctrl_c_stops_a_long_run_and_keeps_its_folder(tmp_path):
    manifest = tmp_path / "run" / "manifest.json"
    interrupted(f"lenlab.train(out={str(tmp_path / 'run')!r}, progress=False, **{LONG!r})",
                manifest.exists)
    assert json.loads(manifest.read_text())["status"] == "running"


def test_ctrl_c_stops_a_reproduction(tmp_path):
    config = tiny_config(tmp_path / "long.toml", steps=200000)
    runs = tmp_path / "exp" / "runs"
    interrupted(f"lenlab.reproduce({str(config)!r}, out={str(tmp_path / 'exp')!r}, jobs=2, "
                "progress=False)", lambda: len(list(runs.glob("*/manifest.json"))) >= 2)
    statuses = [json.loads(m.read_text())["status"] for m in runs.glob("*/manifest.json")]
    assert statuses == ["running", "running"]


