"""Settings from Python values to the engine's JSON: NumPy scalars become numbers, anything else
that is no number, string or bool is refused by name (json.dumps would say only "not JSON
serializable", without the setting)."""

from __future__ import annotations

import numbers

import numpy as np

from . import _lenlab

UsageError = _lenlab.UsageError


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + f"... ({len(text)} characters)"


def setting_value(key: str, value):
    """value as JSON takes it: bool, int, float or str; a NumPy scalar as its Python number."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):  # int and NumPy's integers
        return int(value)
    if isinstance(value, numbers.Real):  # float and NumPy's floats
        return float(value)
    if isinstance(value, str):
        return value
    raise UsageError(f"setting {key!r} must be a number, a string or a bool, got "
                     f"{type(value).__name__} {_shown(value)}")


def test_time_settings(settings: dict) -> dict:
    """Run.eval's keywords: the settings whose rows say test-time (the engine's table of settings),
    each as its row's kind takes it (a number given to a text setting such as temperature as its
    text, a switch as 0 or 1)."""
    rows = _lenlab.setting_rows()
    allowed = sorted(key for key, row in rows.items() if row["test_time"])
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise UsageError(f"unknown eval setting {unknown[0]!r}; valid: " + ", ".join(allowed))
    out = {}
    for key, value in settings.items():
        kind = rows[key]["kind"]
        if kind == "switch":
            value = int(value)
        elif kind == "string" and not isinstance(value, str):
            value = str(value)
        out[key] = value
    return out


def settings_json_ready(settings: dict) -> dict:
    """Every value through setting_value."""
    return {key: setting_value(key, value) for key, value in settings.items()}


def _is_integer(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _items_text(value, is_item, as_text, refusal: str) -> str:
    """None, a text, one item or a list of items as the CLI's comma-separated text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if is_item(value):
        return as_text(value)
    try:
        items = list(value)
    except TypeError:
        items = None
    if items and all(is_item(v) for v in items):
        return ",".join(as_text(v) for v in items)
    raise UsageError(f"{refusal}, got {type(value).__name__} {_shown(value)}")


def lengths_text(value) -> str:
    """A lengths setting as the CLI's text: "1..50,64", one length (5) or a list of them."""
    return _items_text(value, _is_integer, lambda v: str(int(v)),
                       "lengths must be a text such as '1..50,64,128', a length or a list of "
                       "lengths")


def depths_text(value) -> str:
    """passkey's depths as the CLI's text: "0,0.5,1", "random", one depth or a list of them."""
    return _items_text(value, _is_real, lambda v: repr(float(v)),
                       "depths must be a text such as '0,0.5,1' or 'random', a depth in [0, 1] "
                       "or a list of them")
