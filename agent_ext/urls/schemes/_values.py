"""Describing the user's objects without trusting them: type names, sizes, shapes, heads.

Used by var://. Everything here may run user code (properties, ``__len__``, ``__repr__``), so
callers run it through ``_guard``. pandas and numpy objects are recognised by their type's
module and name, never by importing pandas or numpy.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

from ._guard import cut

PLAIN = (type(None), bool, int, float, complex)
SIZED = (list, tuple, set, frozenset, dict, range, bytes, bytearray)


def type_name(value: object) -> str:
    """The short type name (``DataFrame``, ``int``)."""
    return str(type(value).__qualname__)


def full_type_name(value: object) -> str:
    """``module.Qualname`` (``pandas.core.frame.DataFrame``); builtins without a module."""
    t = type(value)
    module = str(t.__module__)
    return str(t.__qualname__) if module == "builtins" else f"{module}.{t.__qualname__}"


def kind_of(value: object) -> str:
    """``dataframe``, ``series``, ``ndarray`` or ``""``, from the type alone."""
    t = type(value)
    module, name = str(t.__module__), str(t.__name__)
    if module.startswith("pandas") and name in ("DataFrame", "Series"):
        return name.lower()
    if module == "numpy" and name == "ndarray":
        return "ndarray"
    return ""


def summary(value: Any) -> str:
    """One short line for the variable list (may run user code: call it guarded)."""
    t = type(value)
    kind = kind_of(value)
    if kind == "dataframe":
        rows, cols = value.shape
        return f"{rows} rows x {cols} columns"
    if kind == "series":
        return f"len {value.shape[0]}, dtype {value.dtype}"
    if kind == "ndarray":
        return f"shape {value.shape}, dtype {value.dtype}"
    if t in PLAIN:
        return cut(repr(value), 60)
    if t is str:
        return f"len {len(value)}: {cut(repr(value[:80]), 60)}"
    if t in SIZED:
        return f"len {len(value)}"
    if t is types.FunctionType:
        return f"def {value.__name__}{_signature(value)}"
    if isinstance(value, type):
        return "class"
    return ""


def details(value: Any, call: Callable[[Callable[[], object], int], str]) -> list[str]:
    """Lines describing ``value``; ``call(fn, limit)`` runs user code guarded and cut."""
    lines = [f"type: {full_type_name(value)}"]
    kind = kind_of(value)
    if kind == "dataframe":
        lines.append("shape: " + call(lambda: str(value.shape), 200))
        lines.append("dtypes:\n" + call(lambda: str(value.dtypes.to_string()), 4000))
        lines.append("head:\n" + call(lambda: value.head(5).to_string(max_cols=30), 6000))
        return lines
    if kind == "series":
        lines.append("len: " + call(lambda: str(len(value)), 50))
        lines.append("dtype: " + call(lambda: str(value.dtype), 200))
        lines.append("head:\n" + call(lambda: value.head(10).to_string(), 4000))
        return lines
    if kind == "ndarray":
        lines.append("shape: " + call(lambda: str(value.shape), 200))
        lines.append("dtype: " + call(lambda: str(value.dtype), 200))
    elif type(value) in SIZED or type(value) is str or _has(value, "__len__"):
        lines.append("len: " + call(lambda: str(len(value)), 50))
    if callable(value) and (inspect.isfunction(value) or inspect.isclass(value)
                            or inspect.ismethod(value) or inspect.isbuiltin(value)):
        lines.append("signature: " + call(lambda: _signature(value), 500))
        lines.append("doc: " + call(lambda: (inspect.getdoc(value) or "").split("\n\n")[0], 600))
    lines.append("repr:\n" + call(lambda: repr(value), 3000))
    return lines


def _has(value: object, attr: str) -> bool:
    return any(attr in vars(k) for k in type(value).__mro__)


def _signature(value: Any) -> str:
    try:
        return str(inspect.signature(value))
    except (TypeError, ValueError):
        return "(...)"
