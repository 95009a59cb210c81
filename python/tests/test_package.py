"""The package around the module: its version is the program's, `python -m lenlab` runs the
program, an installed layout finds the default corpus, and a module built for another Python (or
none) is refused in words that say what to do. The pip install itself: python/install_test/."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import lenlab

from support import LENLAB, cli_flags

PACKAGE = Path(lenlab.__file__).resolve().parent


def _env(**changes):
    env = dict(os.environ)
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def test_the_version_is_the_programs():
    r = subprocess.run([LENLAB, "--version"], capture_output=True, text=True)
    assert r.returncode == 0
    assert r.stdout.startswith(f"lenlab {lenlab.__version__} ("), r.stdout
    assert lenlab.__version__ == lenlab._lenlab.__version__
    assert "__version__" in lenlab.__all__


def test_python_m_lenlab_runs_the_program():
    program = subprocess.run([LENLAB, "--version"], capture_output=True, text=True).stdout
    r = subprocess.run([sys.executable, "-m", "lenlab", "--version"], capture_output=True,
                       text=True)
    assert (r.returncode, r.stdout) == (0, program), r.stderr
    r = subprocess.run([sys.executable, "-m", "lenlab", "frobnicate"], capture_output=True,
                       text=True)  # its arguments, its exit code
    assert r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr
    # Without LENLAB_BINARY, the program of the build folder this package is in.
    if (PACKAGE.parent.parent / "CMakeCache.txt").is_file():
        r = subprocess.run([sys.executable, "-m", "lenlab", "--version"], capture_output=True,
                           text=True, env=_env(LENLAB_BINARY=None))
        assert (r.returncode, r.stdout) == (0, program), r.stderr
    r = subprocess.run([sys.executable, "-m", "lenlab", "--version"], capture_output=True,
                       text=True, env=_env(LENLAB_BINARY="/nonexistent/lenlab"))
    assert r.returncode == 1
    assert "no lenlab program at /nonexistent/lenlab (LENLAB_BINARY)" in r.stderr
    assert "pip install ." in r.stderr


TINY_TEXT = dict(task="text", l_train=8, l_test=8, steps=2, batch_size=4, eval_samples=2,
                 d_model=16, n_head=2, d_ff=32, n_layer=1)


def _text_run(program, out, env):
    """A tiny text run by `program`, or by the module in env's PYTHONPATH for None; its manifest's
    corpus."""
    if program is None:
        command = [sys.executable, "-c",
                   "import sys, lenlab; print(lenlab.__file__); "
                   f"lenlab.train(out=sys.argv[1], progress=False, **{TINY_TEXT!r})", str(out)]
    else:
        command = [str(program), "train", "--out", str(out), *cli_flags(TINY_TEXT)]
    r = subprocess.run(command, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    if program is None:
        assert r.stdout.startswith(env["PYTHONPATH"]), r.stdout  # the copy's module
    return json.loads((out / "manifest.json").read_text())["corpus"]


def test_an_installed_layout_finds_its_default_corpus(tmp_path):
    """<prefix>/share/lenlab/kjv.txt, found from <prefix>/bin/lenlab and from the module in
    <prefix>/lib/pythonX.Y/site-packages/lenlab (where a wheel installs them)."""
    built = Path(LENLAB).resolve().parent / "corpus" / "kjv.txt"
    if not built.is_file():
        pytest.skip("this build has no default corpus (Debian's bible-kjv)")
    prefix = tmp_path / "prefix"
    corpus = prefix / "share" / "lenlab" / "kjv.txt"
    corpus.parent.mkdir(parents=True)
    shutil.copyfile(built, corpus)
    (prefix / "bin").mkdir()
    shutil.copy2(LENLAB, prefix / "bin" / "lenlab")
    site = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    shutil.copytree(PACKAGE, site / "lenlab", ignore=shutil.ignore_patterns("__pycache__"))
    env = _env(LENLAB_CORPUS=None, PYTHONPATH=str(site))
    program = _text_run(prefix / "bin" / "lenlab", tmp_path / "cli", env)
    module = _text_run(None, tmp_path / "py", env)
    assert program["path"] == module["path"] == str(corpus)
    assert program["hash"] == module["hash"]
    # The build's program: the build's corpus; LENLAB_CORPUS=FILE: that file.
    assert _text_run(LENLAB, tmp_path / "build", env)["path"] == str(built)
    other = tmp_path / "other.txt"
    other.write_text("In the beginning God created the heaven and the earth.\n" * 64)
    named = _text_run(prefix / "bin" / "lenlab", tmp_path / "named",
                      _env(LENLAB_CORPUS=str(other)))
    assert named["path"] == str(other)


def _fake_package(tmp_path, module_name):
    package = tmp_path / "lenlab"
    package.mkdir()
    for f in PACKAGE.glob("*.py"):
        shutil.copyfile(f, package / f.name)
    if module_name:
        (package / module_name).write_bytes(b"not a module")
    return subprocess.run([sys.executable, "-c", "import lenlab"], capture_output=True,
                          text=True, env=_env(PYTHONPATH=str(tmp_path)))


def test_a_module_built_for_another_python_says_which_and_what_to_do(tmp_path):
    other = "39" if sys.version_info[:2] != (3, 9) else "310"
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    mine = f"{sys.version_info[0]}{sys.version_info[1]}"
    module = "_lenlab" + suffix.replace(f"-{mine}", f"-{other}", 1)
    assert module != "_lenlab" + suffix
    r = _fake_package(tmp_path, module)
    assert r.returncode == 1
    message = r.stderr.strip().splitlines()[-1]
    assert message.startswith("ImportError: lenlab's C++ module in"), r.stderr
    assert f"was built for CPython {other[0]}.{other[1:]}" in message
    assert f"this is Python {sys.version.split()[0]} ({sys.executable})" in message
    assert f"loads only _lenlab{suffix}" in message
    assert f"`{sys.executable} -m pip install --no-build-isolation .`" in message


def test_no_module_at_all_says_how_to_build_it(tmp_path):
    r = _fake_package(tmp_path, None)
    assert r.returncode == 1
    message = r.stderr.strip().splitlines()[-1]
    assert "lenlab's C++ module is not in" in message and "(no _lenlab*.so)" in message
    assert "pip install --no-build-isolation ." in message and "PYTHONPATH" in message


def test_a_module_for_this_python_that_fails_to_load_keeps_the_reason(tmp_path):
    r = _fake_package(tmp_path, "_lenlab" + sysconfig.get_config_var("EXT_SUFFIX"))
    assert r.returncode == 1
    message = r.stderr.strip().splitlines()[-1]
    assert "did not load in Python" in message and "build it again" in message
