"""lenlab's PEP 517 build backend (pyproject.toml): `pip install .`, `pip install -e .` and
`python3 -m build` run lenlab's CMake build and package what it made.

Standard library only, and kept in the source tree (pyproject.toml's backend-path), so a build
needs no package installed and no package index, with build isolation or without it.

The build: CMake's targets `lenlab` (the program) and `lenlab_python` (the module), for the Python
that runs this backend (-DLENLAB_PYTHON_EXECUTABLE), in build/pip under the source tree, configured
as a release build without the tests and benchmarks (ccache, where installed, makes a second
build of the same sources quick). LENLAB_CMAKE_ARGS (or --config-settings cmake-args=...) adds
flags to that configure step: -DLENLAB_NATIVE=OFF for a wheel that runs on other x86-64 CPUs than
this one's. LENLAB_BUILD_DIR (or --config-settings build-dir=DIR), an absolute path, names an
already configured build folder instead, such as build/release: its two targets are brought up to
date there and packaged, reusing its objects; its module must have been built for this Python.

A wheel holds:
    lenlab/ ...                          python/lenlab/ of the source tree (its .py files and any
                                         others), and the module _lenlab<EXT_SUFFIX>
    lenlab-V.data/scripts/lenlab         the program, which pip installs as the environment's
                                         bin/lenlab
    lenlab-V.data/data/share/lenlab/kjv.txt
                                         the text task's default corpus, installed as
                                         <prefix>/share/lenlab/kjv.txt, where the program and the
                                         module look for it (tasks/text_corpus.cpp)
An editable wheel (PEP 660) holds a .pth file that puts the source tree's python/ folder on
sys.path, and the program and corpus as above; the module is copied into python/lenlab/ of the
source tree (git ignores it). C++ changes need `pip install -e .` again (an incremental build).
An sdist holds the files `git ls-files` lists (tracked, and untracked ones git does not ignore),
or outside a git checkout the tree without build/, runs/ and the like, and PKG-INFO.

The wheel is tagged for this interpreter and platform (e.g. cp311-cp311-linux_x86_64). It links
the Debian libraries lenlab builds with (scripts/install-deps.sh), which it needs at run time: it
is not a manylinux wheel for other distributions.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]  # python/build_backend/lenlab_backend.py
NAME = "lenlab"

__all__ = ["build_wheel", "build_sdist", "build_editable", "get_requires_for_build_wheel",
           "get_requires_for_build_sdist", "get_requires_for_build_editable",
           "prepare_metadata_for_build_wheel", "prepare_metadata_for_build_editable"]


class BuildError(RuntimeError):
    """A build that cannot go on; its message says why and what to do."""


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---- metadata -----------------------------------------------------------------------------------


def _version() -> str:
    """project(lenlab VERSION x.y.z) of CMakeLists.txt: the one place the version is written."""
    text = (SOURCE / "CMakeLists.txt").read_text(encoding="utf-8")
    m = re.search(r"project\(\s*lenlab\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)", text)
    if not m:
        raise BuildError(f"{SOURCE / 'CMakeLists.txt'}: no project(lenlab VERSION x.y.z) line")
    return m.group(1)


def _pyproject() -> dict:
    try:
        import tomllib  # Python 3.11 on
    except ModuleNotFoundError:
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            from pip._vendor import tomli as tomllib  # pip carries one
    with open(SOURCE / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _requirement(requirement: str, extra: str) -> str:
    """`requirement` of the extra `extra`, its own marker kept."""
    name, _, marker = requirement.partition(";")
    if marker.strip():
        return f'{name.strip()}; ({marker.strip()}) and extra == "{extra}"'
    return f'{name.strip()}; extra == "{extra}"'


def _metadata() -> str:
    """The METADATA (and sdist PKG-INFO) text, core metadata 2.1, from pyproject.toml's [project]."""
    project = _pyproject()["project"]
    if project.get("name") != NAME or "version" not in project.get("dynamic", []):
        raise BuildError("pyproject.toml: [project] must name lenlab with a dynamic version")
    lines = ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {_version()}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    for requirement in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {requirement}")
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {_requirement(r, extra)}" for r in requirements]
    description = ""
    readme = project.get("readme")
    if isinstance(readme, str):
        description = (SOURCE / readme).read_text(encoding="utf-8")
        kind = "text/markdown" if readme.endswith(".md") else "text/plain"
        lines.append(f"Description-Content-Type: {kind}; charset=UTF-8")
    return "\n".join(lines) + "\n\n" + description


def _dist_info() -> str:
    return f"{NAME}-{_version()}.dist-info"


def _tag() -> str:
    """This interpreter's wheel tag, e.g. cp311-cp311-linux_x86_64: the module runs only there."""
    nodot = f"{sys.version_info[0]}{sys.version_info[1]}"
    if sys.implementation.name == "cpython":
        interpreter = abi = f"cp{nodot}"
        if sysconfig.get_config_var("Py_DEBUG"):
            abi += "d"
        if sysconfig.get_config_var("Py_GIL_DISABLED"):
            abi += "t"
    else:  # e.g. PyPy: pp + its Python version, the ABI from SOABI (pypy39-pp73 -> pypy39_pp73)
        interpreter = {"pypy": "pp"}.get(sys.implementation.name, sys.implementation.name) + nodot
        soabi = sysconfig.get_config_var("SOABI") or ""
        abi = "_".join(soabi.split("-")[:2]).replace(".", "_") or "none"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{interpreter}-{abi}-{platform}"


def _wheel_text() -> str:
    return ("Wheel-Version: 1.0\nGenerator: lenlab_backend (python/build_backend)\n"
            f"Root-Is-Purelib: false\nTag: {_tag()}\n")


def _write_metadata(metadata_directory: str) -> str:
    info = Path(metadata_directory) / _dist_info()
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata(), encoding="utf-8")
    (info / "WHEEL").write_text(_wheel_text(), encoding="utf-8")
    return info.name


# ---- the CMake build ----------------------------------------------------------------------------


def _run(command: list) -> None:
    """Runs `command`, its output on stderr line by line (pip -v shows it)."""
    _log("lenlab: $ " + " ".join(shlex.quote(str(c)) for c in command))
    try:
        process = subprocess.Popen([str(c) for c in command], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, errors="replace")
    except FileNotFoundError as e:
        raise BuildError(f"{command[0]} not found: lenlab builds with CMake 3.25 or later and "
                         "Debian's packages (scripts/install-deps.sh installs them)") from e
    for line in process.stdout:
        sys.stderr.write(line)
        sys.stderr.flush()
    if process.wait() != 0:
        raise BuildError(f"`{' '.join(str(c) for c in command)}` failed (exit code "
                         f"{process.returncode}); its output is above (pip shows it with -v)")


def _cached(cache: Path, name: str):
    """A variable's value in a CMakeCache.txt, or None."""
    for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(name + ":"):
            return line.partition("=")[2]
    return None


def _setting(config_settings, key: str, variable: str) -> str:
    value = (config_settings or {}).get(key)
    if isinstance(value, list):  # given twice
        value = value[-1]
    return value if value else os.environ.get(variable, "")


def _build(config_settings) -> Path:
    """Builds the targets lenlab and lenlab_python; returns the build folder."""
    cmake = shutil.which("cmake") or "cmake"
    jobs = [] if os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") else \
        ["--parallel", str(os.cpu_count() or 1)]
    given = _setting(config_settings, "build-dir", "LENLAB_BUILD_DIR")
    extra = shlex.split(_setting(config_settings, "cmake-args", "LENLAB_CMAKE_ARGS"))
    if given:
        build = Path(given).expanduser()
        if not build.is_absolute():
            build = (Path.cwd() / build).resolve()
        if not (build / "CMakeCache.txt").is_file():
            raise BuildError(f"LENLAB_BUILD_DIR={given}: not a configured CMake build folder (no "
                             "CMakeCache.txt); configure it first (cmake --preset release), or "
                             "unset LENLAB_BUILD_DIR to build in build/pip")
        if extra:
            _log(f"lenlab: LENLAB_CMAKE_ARGS ignored: {build} is configured already")
        home = _cached(build / "CMakeCache.txt", "CMAKE_HOME_DIRECTORY")
        if home and Path(home).resolve() != SOURCE:
            _log(f"lenlab: note: {build} builds the sources in {home}, not {SOURCE}")
        _log(f"lenlab: building lenlab and lenlab_python in {build} (LENLAB_BUILD_DIR)")
    else:
        build = SOURCE / "build" / "pip"
        cache = build / "CMakeCache.txt"
        built_for = _cached(cache, "PYTHON_MODULE_EXTENSION") if cache.is_file() else None
        if built_for and built_for != sysconfig.get_config_var("EXT_SUFFIX"):
            _log(f"lenlab: {build} was configured for another Python ({built_for}); "
                 "configuring it afresh for this one")
            cache.unlink()
        _run([cmake, "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
              "-DCMAKE_UNITY_BUILD=ON", "-DCMAKE_UNITY_BUILD_BATCH_SIZE=8",
              "-DLENLAB_BUILD_TESTS=OFF", "-DLENLAB_BUILD_BENCH=OFF", "-DLENLAB_PYTHON=ON",
              f"-DLENLAB_PYTHON_EXECUTABLE={sys.executable}", *extra])
    _run([cmake, "--build", build, "--target", "lenlab", "lenlab_python", *jobs])
    return build


def _module(build: Path) -> Path:
    """The built module for this Python, or BuildError naming the ones there are."""
    folder = build / "python" / "lenlab"
    module = folder / ("_lenlab" + sysconfig.get_config_var("EXT_SUFFIX"))
    if module.is_file():
        return module
    others = sorted(p.name for p in folder.glob("_lenlab*")) if folder.is_dir() else []
    raise BuildError(
        f"{folder} has no {module.name}, the module for this Python ({sys.executable}, "
        f"{sys.version.split()[0]})" + (f"; it has {', '.join(others)}, built for another Python"
                                        if others else "") +
        ". Reconfigure that folder with -DLENLAB_PYTHON_EXECUTABLE=" + sys.executable +
        ", or unset LENLAB_BUILD_DIR to build in build/pip")


# ---- wheels -------------------------------------------------------------------------------------


def _zip_time() -> tuple:
    """Every archive member's time: SOURCE_DATE_EPOCH's, or 1980-01-01 (reproducible archives)."""
    epoch = max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)
    return time.gmtime(epoch)[:6]


class _Wheel:
    """A wheel being written: members, then RECORD (sha256 and size of each) last."""

    def __init__(self, path: Path):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.records = []
        self.time = _zip_time()

    def add(self, name: str, data: bytes, executable: bool = False) -> None:
        info = zipfile.ZipInfo(name, date_time=self.time)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append([name, f"sha256={digest}", str(len(data))])

    def add_file(self, name: str, path: Path, executable: bool = False) -> None:
        self.add(name, path.read_bytes(), executable)

    def close(self, record: str) -> None:
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerows(self.records + [[record, "", ""]])
        info = zipfile.ZipInfo(record, date_time=self.time)
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        self.zip.writestr(info, text.getvalue(), zipfile.ZIP_DEFLATED)
        self.zip.close()


def _package_files():
    """python/lenlab/'s files (not the module copied there by an editable install, nor caches)."""
    package = SOURCE / "python" / "lenlab"
    for path in sorted(package.rglob("*")):
        relative = path.relative_to(package)
        if (path.is_dir() or "__pycache__" in relative.parts or path.suffix in (".pyc", ".so")
                or path.name.startswith(".")):
            continue
        yield relative.as_posix(), path


def _wheel(wheel_directory: str, config_settings, editable: bool) -> str:
    build = _build(config_settings)
    module = _module(build)
    program = build / "lenlab"
    if not program.is_file():
        raise BuildError(f"{program}: the build made no lenlab program")
    dist = f"{NAME}-{_version()}"
    name = f"{dist}-{_tag()}.whl"
    directory = Path(wheel_directory)
    directory.mkdir(parents=True, exist_ok=True)
    part = directory / (name + ".part")
    wheel = _Wheel(part)
    try:
        if editable:
            # The module beside the source's Python files, replaced by rename: a Python that has
            # the old one loaded keeps its copy.
            target = SOURCE / "python" / "lenlab" / module.name
            shutil.copyfile(module, target.with_name(target.name + ".part"))
            os.replace(target.with_name(target.name + ".part"), target)
            _log(f"lenlab: {target} (editable: the source tree's python/ is on sys.path)")
            wheel.add(f"__editable__.{dist}.pth", (str(SOURCE / "python") + "\n").encode())
        else:
            for relative, path in _package_files():
                wheel.add_file(f"{NAME}/{relative}", path)
            wheel.add_file(f"{NAME}/{module.name}", module, executable=True)
        wheel.add_file(f"{dist}.data/scripts/lenlab", program, executable=True)
        corpus = build / "corpus" / "kjv.txt"
        if corpus.is_file():
            wheel.add_file(f"{dist}.data/data/share/lenlab/kjv.txt", corpus)
        else:
            _log("lenlab: the build has no default text corpus (Debian's bible-kjv is not "
                 "installed): the text task will ask for --corpus")
        info = _dist_info()
        wheel.add(f"{info}/METADATA", _metadata().encode("utf-8"))
        wheel.add(f"{info}/WHEEL", _wheel_text().encode("utf-8"))
        wheel.close(f"{info}/RECORD")
    except BaseException:
        wheel.zip.close()
        part.unlink(missing_ok=True)
        raise
    os.replace(part, directory / name)
    _log(f"lenlab: wrote {directory / name}")
    return name


# ---- sdists -------------------------------------------------------------------------------------

# Outside a git checkout (an unpacked sdist): what .gitignore leaves out, walking the tree.
_SKIPPED_TOP = {".git", "build", "runs", "out", "figures", "dist"}
_SKIPPED_ANYWHERE = {"__pycache__", ".ipynb_checkpoints", "node_modules", ".pytest_cache"}


def _walked_files() -> list:
    files = []
    for root, dirs, names in os.walk(SOURCE):
        here = Path(root)
        top = here == SOURCE
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_ANYWHERE and not (
            top and (d in _SKIPPED_TOP or d.startswith("build-"))) and not (
            here / d / "pyvenv.cfg").exists())
        for n in sorted(names):
            path = here / n
            relative = path.relative_to(SOURCE).as_posix()
            if n.endswith((".pyc", ".swp")) or (relative.startswith("python/lenlab/")
                                                 and n.endswith(".so")):
                continue
            files.append(relative)
    return files


def _source_files() -> list:
    """The files of an sdist, relative to the source folder."""
    try:
        top = subprocess.run(["git", "-C", str(SOURCE), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        if Path(top).resolve() != SOURCE:
            return _walked_files()
        listed = subprocess.run(["git", "-C", str(SOURCE), "ls-files", "-z", "--cached",
                                 "--others", "--exclude-standard"],
                                capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return _walked_files()
    files = {f for f in listed.decode("utf-8", "surrogateescape").split("\0") if f}
    venvs = {d.name for d in SOURCE.iterdir() if (d / "pyvenv.cfg").is_file()}  # an unignored one
    return sorted(f for f in files if ((SOURCE / f).is_file() or (SOURCE / f).is_symlink())
                  and f.split("/", 1)[0] not in venvs)


def _tar_info(info: tarfile.TarInfo, mtime: int) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = mtime
    if info.isreg():
        info.mode = 0o755 if info.mode & 0o111 else 0o644
    return info


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{_version()}"
    directory = Path(sdist_directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{base}.tar.gz"
    part = directory / (name + ".part")
    mtime = max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)
    files = _source_files()
    try:
        with tarfile.open(part, "w:gz", format=tarfile.PAX_FORMAT) as tar:
            for relative in files:
                path = SOURCE / relative
                info = _tar_info(tar.gettarinfo(str(path), arcname=f"{base}/{relative}"), mtime)
                if info.isreg():
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
            pkg_info = _metadata().encode("utf-8")
            info = _tar_info(tarfile.TarInfo(f"{base}/PKG-INFO"), mtime)
            info.size = len(pkg_info)
            tar.addfile(info, io.BytesIO(pkg_info))
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    os.replace(part, directory / name)
    _log(f"lenlab: wrote {directory / name} ({len(files)} files)")
    return name


# ---- the PEP 517 and PEP 660 hooks --------------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_metadata(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _write_metadata(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, config_settings, editable=False)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, config_settings, editable=True)
