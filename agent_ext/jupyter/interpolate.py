"""``{name}`` in a ``%%agent`` prompt: the value of a variable, like other magics, but safely.

Only a placeholder naming an existing variable or attribute path (``{df}``, ``{df.shape}``)
is replaced; nothing is evaluated, so code in a prompt (``{'a': 1}``, ``f"{x + 1}"``,
``{missing}``) stays as written. ``{{`` gives a literal ``{`` and ``{{name}}`` a literal
``{name}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(
    r"\{\{(?P<escaped>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}\}"
    r"|(?P<brace>\{\{)"
    r"|\{(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}")
_MISSING = object()


def interpolate(text: str, namespace: Mapping[str, Any]) -> str:
    """``text`` with each resolvable ``{name}`` replaced by ``str()`` of its value."""
    def replace(match: re.Match[str]) -> str:
        if match.group("escaped") is not None:
            return "{" + match.group("escaped") + "}"
        if match.group("brace") is not None:
            return "{"
        value = lookup(match.group("name"), namespace)
        if value is _MISSING:
            return match.group(0)
        try:
            return str(value)
        except Exception:  # noqa: BLE001  an object that cannot print itself stays a placeholder
            return match.group(0)

    return _TOKEN.sub(replace, text)


def lookup(path: str, namespace: Mapping[str, Any]) -> Any:
    """The value at a dotted ``path`` from ``namespace``, or ``_MISSING``."""
    head, *rest = path.split(".")
    if head not in namespace:
        return _MISSING
    value = namespace[head]
    for attr in rest:
        try:
            value = getattr(value, attr)
        except Exception:  # noqa: BLE001  any failing property means "not a variable here"
            return _MISSING
    return value
