"""`python -m lenlab ARGS`: runs the `lenlab` program with ARGS (it replaces this process).

The program is looked for, in this order:
  1. LENLAB_BINARY, when set (as the tests set it);
  2. the build folder's, when this package is a CMake build folder's (the PYTHONPATH way:
     build/release/python/lenlab -> build/release/lenlab), so that the program and the module
     come from the same build even where another lenlab is installed;
  3. the scripts folder of this Python's environment, where pip installs it (a venv's bin/), of its
     user scheme (~/.local/bin), and the folder of the interpreter itself.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path


def _candidates():
    """(where, path) pairs in the order they are tried."""
    given = os.environ.get("LENLAB_BINARY")
    if given:
        yield "LENLAB_BINARY", Path(given)
        return
    build = Path(__file__).resolve().parent.parent.parent
    if (build / "CMakeCache.txt").is_file():
        yield "the build folder", build / "lenlab"
    folders = []
    for scheme in (None, f"{os.name}_user"):
        try:
            folder = sysconfig.get_path("scripts", scheme) if scheme else \
                sysconfig.get_path("scripts")
        except KeyError:
            continue
        if folder:
            folders.append(Path(folder))
    folders.append(Path(sys.executable).parent)
    for folder in folders:
        yield "the scripts folder", folder / "lenlab"


def find_program() -> Path:
    """The `lenlab` program, or SystemExit saying where it was looked for and how to get it."""
    looked = []
    for where, path in _candidates():
        if path.is_file() and os.access(path, os.X_OK):
            return path
        looked.append(f"{path} ({where})")
    sys.exit("python -m lenlab: no lenlab program at " + ", ".join(dict.fromkeys(looked)) +
             ". `pip install .` in lenlab's source folder installs it beside this Python; a "
             "CMake build makes build/release/lenlab (scripts/quickstart.sh); LENLAB_BINARY=PATH "
             "names one.")


def main() -> None:
    program = find_program()
    sys.stdout.flush()
    os.execv(program, [str(program), *sys.argv[1:]])


if __name__ == "__main__":
    main()
