"""lenlab as a pip package, installed the way docs/python.md says, with no network: a fresh venv of
this Python (Debian's, as ctest runs it) with its system packages, `pip install
--no-build-isolation --no-index .`; there `import lenlab`, `lenlab.train`, the venv's `lenlab`
program and `python -m lenlab`, against the build's program byte for byte, `run.to_torch()`, and a notebook run by a kernel of the venv. Then `python3 -m build
--no-isolation` (an sdist, and a wheel built from it) and `pip install -e` of the unpacked sdist.

Every build step reuses the build folder the test runs in (LENLAB_BUILD_DIR, set by ctest:
python/CMakeLists.txt), so no step compiles more than an incremental build would. About a minute.
"""

import base64
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2]
BUILD = os.environ.get("LENLAB_BUILD_DIR")
PROGRAM = os.environ.get("LENLAB_BINARY")
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")

if not BUILD or not PROGRAM:
    pytest.skip("needs LENLAB_BUILD_DIR and LENLAB_BINARY (ctest sets them)",
                allow_module_level=True)
for module, package in (("ensurepip", "python3-venv"), ("pip", "python3-pip")):
    if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode:
        pytest.skip(f"{sys.executable} has no {module} (Debian: {package}; "
                    "scripts/install-deps.sh installs it)", allow_module_level=True)

# The tiny run of the module's tests (python/tests/support.py), with the CLI's flag names.
SETTINGS = dict(task="length", pe="rope", l_train=4, l_test=8, steps=60, batch_size=16,
                d_model=16, n_head=2, d_ff=32, n_layer=1, eval_samples=32, warmup_steps=5, seed=3)
FLAGS = {"batch_size": "--batch", "warmup_steps": "--warmup"}


def _flags(settings):
    out = []
    for k, v in settings.items():
        out += [FLAGS.get(k, "--" + k.replace("_", "-")), str(v)]
    return out


def _env(**extra):
    """The environment of every step: nothing of the build's Python path, pip without an index,
    a cache or a user config, and the build folder to reuse."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "LENLAB_BINARY",
                        "LENLAB_CORPUS")}
    env.update(PIP_NO_INDEX="1", PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_CONFIG_FILE=os.devnull, PIP_NO_INPUT="1", LENLAB_BUILD_DIR=BUILD)
    env.update(extra)
    return env


def _run(command, **kwargs):
    started = time.monotonic()
    r = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                       env=kwargs.pop("env", _env()), **kwargs)
    print(f"{time.monotonic() - started:6.1f} s  {' '.join(str(c) for c in command)}")
    assert r.returncode == 0, f"{command}\n{r.stdout}\n{r.stderr}"
    return r


def _venv(folder: Path) -> Path:
    _run([sys.executable, "-m", "venv", "--system-site-packages", folder])
    return folder / "bin" / "python"


def _version() -> str:
    out = _run([PROGRAM, "--version"]).stdout  # "lenlab 0.1.0 (<git revision>)"
    return out.split()[1]


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A venv with lenlab installed from the source folder by pip."""
    python = _venv(tmp_path_factory.mktemp("venv") / "venv")
    _run([python, "-m", "pip", "install", "--no-build-isolation", SOURCE], cwd=SOURCE.parent)
    yield python
    shutil.rmtree(python.parent.parent)


def test_pip_install_gives_the_package_the_program_and_the_corpus(venv):
    bin_dir = venv.parent
    r = _run([venv, "-c", "import json, lenlab; "
              "print(json.dumps([lenlab.__file__, lenlab.__version__, lenlab._lenlab.__file__]))"],
             cwd=bin_dir)
    init, version, module = json.loads(r.stdout)
    site = Path(_run([venv, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"])
                .stdout.strip())
    assert Path(init) == site / "lenlab" / "__init__.py"
    assert Path(module) == site / "lenlab" / f"_lenlab{SUFFIX}"
    assert version == _version()
    program = bin_dir / "lenlab"
    assert program.is_file() and not program.is_symlink() and os.access(program, os.X_OK)
    assert program.read_bytes() == Path(PROGRAM).read_bytes()
    assert _run([program, "--version"]).stdout == _run([PROGRAM, "--version"]).stdout
    assert _run([venv, "-m", "lenlab", "--version"]).stdout.startswith(f"lenlab {version} (")
    corpus = bin_dir.parent / "share" / "lenlab" / "kjv.txt"
    built = Path(BUILD) / "corpus" / "kjv.txt"
    if built.is_file():
        assert corpus.read_bytes() == built.read_bytes()


def test_the_installed_program_and_module_give_the_builds_numbers(venv, tmp_path):
    _run([PROGRAM, "train", "--out", tmp_path / "build", *_flags(SETTINGS)])
    _run([venv.parent / "lenlab", "train", "--out", tmp_path / "program", *_flags(SETTINGS)])
    _run([venv, "-m", "lenlab", "train", "--out", tmp_path / "python-m", *_flags(SETTINGS)])
    _run([venv, "-c", "import sys, lenlab; "
          f"lenlab.train(out=sys.argv[1], progress=False, **{SETTINGS!r})", tmp_path / "module"])
    for name in ("results.csv", "loss.csv"):
        build = (tmp_path / "build" / name).read_bytes()
        for other in ("program", "python-m", "module"):
            assert (tmp_path / other / name).read_bytes() == build, (other, name)


def test_to_torch_runs_from_the_installed_package(venv, tmp_path):
    if subprocess.run([venv, "-c", "import torch"], capture_output=True).returncode:
        pytest.skip("no PyTorch for this Python (Debian: python3-torch)")
    code = f"""
import sys, torch, lenlab
run = lenlab.train(out=sys.argv[1], progress=False, **{SETTINGS!r})
ev = run.eval(lengths="4,8", samples=4)
model = run.to_torch()
for bits, out in zip(ev.predictions["input"], ev.predictions["output"]):
    z = model(torch.tensor([[2] + [int(b) for b in bits] + [3]])).scalar.item()  # BOS bits EOS
    assert abs(z - out) <= 1e-5 * max(1.0, abs(out)), (bits, z, out)
print(lenlab.torch.__file__)
"""
    r = _run([venv, "-c", code, tmp_path / "run"], cwd=tmp_path)
    site = _run([venv, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"]).stdout
    assert Path(r.stdout.strip()) == Path(site.strip()) / "lenlab" / "torch.py"


def test_a_notebook_runs_from_the_installed_package(venv, tmp_path):
    """notebooks/04 (to_torch and hooks) at reduced size in a kernel of the venv's Python, which
    has no PYTHONPATH (_env): its lenlab can only be the installed one."""
    if subprocess.run([venv, "-c", "import nbclient, nbformat, ipykernel, torch"],
                      capture_output=True).returncode:
        pytest.skip("needs nbclient, nbformat, ipykernel and torch (Debian's python3-*)")
    # A kernel spec of the venv's Python, as docs/python.md says (Debian's python3 spec would
    # start /usr/bin/python3, which has no lenlab).
    _run([venv, "-m", "ipykernel", "install", "--sys-prefix", "--name", "lenlab-venv"])
    code = """
import sys, nbclient, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbclient.NotebookClient(nb, timeout=300, kernel_name="lenlab-venv").execute()
"""
    notebook = SOURCE / "notebooks" / "04_inside_a_run.ipynb"
    _run([venv, "-c", code, notebook], cwd=tmp_path,
         env=_env(LENLAB_NOTEBOOK_SMALL="1", PYDEVD_DISABLE_FILE_VALIDATION="1"))
    assert list((tmp_path / "figures").glob("*.png"))


def test_the_installed_program_finds_the_installed_corpus(venv, tmp_path):
    if not (Path(BUILD) / "corpus" / "kjv.txt").is_file():
        pytest.skip("this build has no default corpus (Debian's bible-kjv)")
    text = dict(task="text", l_train=8, l_test=8, steps=2, batch_size=4, eval_samples=2,
                d_model=16, n_head=2, d_ff=32, n_layer=1)
    _run([venv.parent / "lenlab", "train", "--out", tmp_path / "text", *_flags(text)])
    corpus = json.loads((tmp_path / "text" / "manifest.json").read_text())["corpus"]
    assert corpus["path"] == str(venv.parent.parent / "share" / "lenlab" / "kjv.txt")


def _record_ok(wheel: zipfile.ZipFile, record: str):
    rows = list(csv.reader(io.StringIO(wheel.read(record).decode())))
    listed = {row[0] for row in rows}
    assert listed == set(wheel.namelist())
    for name, digest, size in rows:
        if name == record:
            assert (digest, size) == ("", "")
            continue
        data = wheel.read(name)
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (f"sha256={expected}", len(data)), name


def test_python_m_build_makes_an_sdist_and_a_wheel_and_pip_install_e_works(tmp_path):
    if subprocess.run([sys.executable, "-c", "import build"], capture_output=True).returncode:
        pytest.skip(f"{sys.executable} has no `build` (Debian: python3-build; "
                    "scripts/install-deps.sh installs it)")
    version = _version()
    dist = tmp_path / "dist"
    # No --sdist/--wheel: the sdist, then a wheel built from the sdist unpacked in a temporary
    # folder (which reuses LENLAB_BUILD_DIR too).
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, SOURCE],
         cwd=SOURCE.parent)
    tag = _run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                "import lenlab_backend; print(lenlab_backend._tag())",
                SOURCE / "python" / "build_backend"]).stdout.strip()
    sdist = dist / f"lenlab-{version}.tar.gz"
    wheel_path = dist / f"lenlab-{version}-{tag}.whl"
    assert sorted(p.name for p in dist.iterdir()) == sorted([sdist.name, wheel_path.name])

    with zipfile.ZipFile(wheel_path) as wheel:
        names = set(wheel.namelist())
        data = f"lenlab-{version}.data"
        info = f"lenlab-{version}.dist-info"
        for name in ("lenlab/__init__.py", "lenlab/__main__.py", f"lenlab/_lenlab{SUFFIX}",
                     f"{data}/scripts/lenlab", f"{info}/METADATA", f"{info}/WHEEL"):
            assert name in names, name
        assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
        package = {n for n in names if n.startswith("lenlab/") and n.endswith(".py")}
        assert package == {"lenlab/" + p.name for p in (SOURCE / "python" / "lenlab").glob("*.py")}
        script = wheel.getinfo(f"{data}/scripts/lenlab")
        assert (script.external_attr >> 16) & 0o111
        assert wheel.read(f"{data}/scripts/lenlab") == Path(PROGRAM).read_bytes()
        if (Path(BUILD) / "corpus" / "kjv.txt").is_file():
            assert f"{data}/data/share/lenlab/kjv.txt" in names
        assert f"Tag: {tag}\n" in wheel.read(f"{info}/WHEEL").decode()
        assert "Root-Is-Purelib: false\n" in wheel.read(f"{info}/WHEEL").decode()
        metadata = wheel.read(f"{info}/METADATA").decode()
        for line in ("Name: lenlab", f"Version: {version}", "Requires-Dist: numpy",
                     'Requires-Dist: torch; extra == "torch"', "Provides-Extra: notebooks",
                     'Requires-Dist: pytest; extra == "test"'):
            assert line + "\n" in metadata, line
        _record_ok(wheel, f"{info}/RECORD")

    with tarfile.open(sdist) as tar:
        members = set(tar.getnames())
        base = f"lenlab-{version}"
        for name in ("PKG-INFO", "pyproject.toml", "CMakeLists.txt", "README.md",
                     "python/lenlab/__init__.py", "python/build_backend/lenlab_backend.py",
                     "python/module.cpp", "lab/cli/main.cpp", "core/version.hpp"):
            assert f"{base}/{name}" in members, name
        assert not any(m.startswith((f"{base}/build/", f"{base}/.git/", f"{base}/runs/"))
                       or m.endswith(".so") for m in members)
        tar.extractall(tmp_path / "unpacked")

    # pip install -e of the unpacked sdist: its python/ on sys.path, the module copied there.
    source = tmp_path / "unpacked" / f"lenlab-{version}"
    python = _venv(tmp_path / "editable")
    _run([python, "-m", "pip", "install", "--no-build-isolation", "-e", source],
         cwd=tmp_path)
    assert (source / "python" / "lenlab" / f"_lenlab{SUFFIX}").is_file()
    (source / "python" / "lenlab" / "_probe.py").write_text("EDITED = True\n")
    r = _run([python, "-c", "import lenlab, lenlab._probe; print(lenlab.__file__, "
              "lenlab.__version__)"], cwd=tmp_path)
    assert r.stdout.split() == [str(source / "python" / "lenlab" / "__init__.py"), version]
    assert _run([python.parent / "lenlab", "--version"]).stdout.startswith(f"lenlab {version} (")
    for folder in (tmp_path / "editable", tmp_path / "unpacked", dist):
        shutil.rmtree(folder)
