"""Python functions as settings: a reparameterization (f, f_inv) or a positional bias b(d, h)
registered with the engine as python:NAME, and the fingerprints that tell one function from
another (a run's id hashes its settings, and "python:NAME" names a function without saying what
it computes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import _lenlab

UsageError = _lenlab.UsageError


# ---- reparameterizations as Python functions ----------------------------------------------------


def _reparam_setting(reparam, reparam_name):
    """The settings' "reparam" value: a string as is; Python functions registered as python:NAME."""
    if isinstance(reparam, str):
        if reparam_name is not None:
            raise UsageError("reparam_name names a Python reparam; reparam is the string "
                             f"{reparam!r}: drop reparam_name")
        return reparam
    if callable(reparam):
        f, inverse = reparam, None
    elif isinstance(reparam, tuple) and len(reparam) in (1, 2) and callable(reparam[0]):
        f, inverse = reparam[0], (reparam[1] if len(reparam) == 2 else None)
        if inverse is not None and not callable(inverse):
            raise UsageError(f"reparam=(f, f_inv): f_inv must be callable or None, got {inverse!r}")
    else:
        raise UsageError("reparam must be a built-in name or expression (a str), a function f, or "
                         f"a tuple (f, f_inv) of functions over NumPy arrays; got {reparam!r}")
    name = reparam_name or getattr(f, "__name__", "")
    _lenlab.register_reparam(name, f, inverse)
    return "python:" + name


# Where f (and f_inv) are probed to tell one function from another: a run's id hashes its
# settings, and "python:NAME" names a function without saying what it computes.
_PROBES = np.concatenate([-np.geomspace(1e-3, 1e3, 16)[::-1], [0.0], np.geomspace(1e-3, 1e6, 64)])


def _values(function, x):
    try:
        with np.errstate(all="ignore"):
            y = np.asarray(function(x.copy()), dtype=np.float64)
        return y if y.shape == x.shape else None
    except Exception:  # the engine's own call reports it; here it only makes functions differ
        return None


def _fingerprint(reparam) -> str:
    """What Python reparam functions compute, in one string: f at fixed probes and f_inv at f's
    finite values there (f alone when f_inv is not given). Same string, same functions to ~1e-12."""
    if isinstance(reparam, str):
        return ""
    f, inverse = (reparam, None) if callable(reparam) else (reparam[0], reparam[-1]
                                                            if len(reparam) == 2 else None)
    fy = _values(f, _PROBES)
    parts = [fy]
    if inverse is not None and fy is not None:
        parts.append(_values(inverse, fy[np.isfinite(fy)]))
    return ";".join("error" if v is None else ",".join(f"{x:.12g}" for x in v) for v in parts)


_FINGERPRINT_FILE = "python_reparam.txt"  # a run's _functions_fingerprint (named before pe_bias)


# ---- a positional bias as a Python function -------------------------------------------------------


def _pe_bias_setting(pe_bias, pe_bias_name):
    """The settings' "pe_bias" value: an expression (a str) as is; a Python function b(d, h)
    registered as python:NAME."""
    if pe_bias is None or isinstance(pe_bias, str):
        if pe_bias_name is not None:
            raise UsageError("pe_bias_name names a Python pe_bias function; pe_bias is "
                             f"{pe_bias!r}: drop pe_bias_name")
        return pe_bias
    if not callable(pe_bias):
        raise UsageError("pe_bias must be an expression in d and h (a str) or a function b(d, h) "
                         f"of a NumPy array of distances and a head index; got {pe_bias!r}")
    name = pe_bias_name or getattr(pe_bias, "__name__", "")
    _lenlab.register_position_bias(name, pe_bias)
    return "python:" + name


_BIAS_PROBES = np.arange(64, dtype=np.float64)  # distances where a pe_bias function is probed


def _bias_fingerprint(pe_bias, n_head: int) -> str:
    """What a Python pe_bias function computes: b(d, h) at d = 0..63 for every head."""
    if pe_bias is None or isinstance(pe_bias, str):
        return ""
    rows = [_values(lambda d, h=h: pe_bias(d, h), _BIAS_PROBES) for h in range(n_head)]
    return "pe_bias:" + ";".join("error" if v is None else ",".join(f"{x:.12g}" for x in v)
                                 for v in rows)


def _functions_fingerprint(reparam, pe_bias, n_head: int) -> str:
    """The fingerprint file's text: the reparam's (as before pe_bias functions existed), then the
    pe_bias function's on its own line when there is one."""
    bias = _bias_fingerprint(pe_bias, n_head)
    return _fingerprint(reparam) + ("\n" + bias if bias else "")


def _same_functions(run_dir: Path, reparam, pe_bias=None, n_head: int = 4) -> bool:
    path = run_dir / _FINGERPRINT_FILE
    return path.is_file() and path.read_text() == _functions_fingerprint(reparam, pe_bias, n_head)


def _recorded_fingerprints(run_dir: Path):
    """(the reparam's, the pe_bias function's) fingerprints a run recorded, "" where it had none;
    None when it recorded no file (it was trained without Python functions, or by the CLI)."""
    path = run_dir / _FINGERPRINT_FILE
    if not path.is_file():
        return None
    lines = path.read_text().split("\n")
    return lines[0], (lines[1] if len(lines) > 1 else "")
