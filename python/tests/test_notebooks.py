"""Every notebook in notebooks/ runs end to end (nbclient, Debian's python3-nbclient) at reduced
size (LENLAB_NOTEBOOK_SMALL=1), in a fresh folder, so the notebooks never rot."""

import os
from pathlib import Path

import pytest

import lenlab

nbformat = pytest.importorskip("nbformat", reason="needs python3-nbformat")
nbclient = pytest.importorskip("nbclient", reason="needs python3-nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("LENLAB_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # the kernel's debugger notice
    # The kernel is a new process in another folder: hand it this lenlab by absolute path.
    package_root = str(Path(lenlab.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [package_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.chdir(tmp_path)
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    assert list((tmp_path / "figures").glob("*.png")), "the notebook saved no figure"
