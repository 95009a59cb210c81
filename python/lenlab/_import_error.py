"""Why `import lenlab` could not load the C++ module, in words that say what to do.

A compiled module loads only in the Python version it was built for: its file name carries that
Python's ABI tag (`_lenlab.cpython-311-x86_64-linux-gnu.so` for CPython 3.11 on x86-64 Linux), and
an interpreter looks only for its own (sysconfig's EXT_SUFFIX). Standard library only: nothing of
lenlab's is loaded yet.
"""

from __future__ import annotations

import re
import sys
import sysconfig
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

_HOW = ("`{python} -m pip install --no-build-isolation .` in lenlab's source folder, in a virtual "
        "environment of this Python (docs/python.md, \"Getting it\")")


def _python_of(name: str) -> str:
    """'_lenlab.cpython-39-x86_64-linux-gnu.so' -> 'CPython 3.9 (cpython-39-x86_64-linux-gnu)'."""
    tag = name[len("_lenlab"):].rsplit(".", 1)[0].lstrip(".")
    m = re.match(r"cpython-(\d)(\d+)", tag)
    return f"CPython {m.group(1)}.{m.group(2)} ({tag})" if m else f"another Python ({name})"


def _build_python(package: Path):
    """For a package in a CMake build folder (build/<preset>/python/lenlab), the Python its module
    was built for as the build names it; None elsewhere (an install)."""
    cache = package.parent.parent / "CMakeCache.txt"
    try:
        text = cache.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("LENLAB_PYTHON_EXECUTABLE:"):
            return line.partition("=")[2]
    return "Debian's /usr/bin/python3, the build's default"


def explained(error: ImportError) -> ImportError:
    """An ImportError for `error`, raised by `from . import _lenlab`."""
    package = Path(__file__).resolve().parent
    this = f"Python {sys.version.split()[0]} ({sys.executable})"
    how = _HOW.format(python=sys.executable or "python3")
    modules = sorted(p.name for p in package.glob("_lenlab.*") if p.suffix in (".so", ".pyd"))
    loadable = [m for m in modules if m in {"_lenlab" + s for s in EXTENSION_SUFFIXES}]
    mine = "_lenlab" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
    if not modules:
        return ImportError(
            f"lenlab's C++ module is not in {package} (no _lenlab*.so): this is lenlab's source "
            f"folder, not a build or an install. Build it for {this}: {how}; or build lenlab with "
            "CMake (scripts/quickstart.sh) and put build/release/python on PYTHONPATH "
            "instead of python/.")
    if not loadable:
        built = ", ".join(_python_of(m) for m in modules)
        build_python = _build_python(package)
        use = f"run the Python it was built for ({build_python})" if build_python else \
            "run the Python it was built for"
        return ImportError(
            f"lenlab's C++ module in {package} was built for {built}, and this is {this}, which "
            f"loads only {mine}: a compiled module runs only in the Python version it was built "
            f"for. Either {use}, or build it for this one: {how}.")
    return ImportError(
        f"lenlab's C++ module {package / loadable[0]} did not load in {this}: {error}. If it was "
        f"built on another machine or before a system upgrade, build it again: {how}, or rebuild "
        "the CMake build folder it comes from.")
