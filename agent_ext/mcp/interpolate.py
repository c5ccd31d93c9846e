"""``${VAR}`` and ``${VAR:-default}`` in MCP server entries, and masking of the secrets they carry.

Server entries name tokens through the environment (``"Authorization": "Bearer ${GH_TOKEN}"``)
so that config files can be shared; the values substituted, and every ``env`` and header value,
are secrets: ``mask`` replaces them with ``***`` in anything shown to the user or the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

_VAR = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}")
_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^/@:\s]*):(?P<pw>[^/@\s]+)@",
                       re.IGNORECASE)
MASK = "***"
#: Shorter values are not masked: "1" or "on" would blank out unrelated text.
MIN_SECRET = 4


@dataclass
class Expanded:
    """A value with its variables substituted: the substituted values and the unset names."""

    text: str
    secrets: set[str] = field(default_factory=set)
    missing: list[str] = field(default_factory=list)


def expand(value: str, environ: Mapping[str, str]) -> Expanded:
    """Substitute ``${VAR}`` (unset → reported missing) and ``${VAR:-default}``."""
    out = Expanded("")

    def sub(found: re.Match[str]) -> str:
        name, default = found["name"], found["default"]
        got = environ.get(name)
        if got is None or (got == "" and default is not None):
            if default is None:
                out.missing.append(name)
                return ""
            got = default
        out.secrets.add(got)
        return got

    out.text = _VAR.sub(sub, value)
    return out


class Masker:
    """Replaces known secret values (and URL passwords) with ``***`` in text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.values = tuple(sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len,
                                   reverse=True))

    def __call__(self, text: str) -> str:
        for secret in self.values:
            text = text.replace(secret, MASK)
        return _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)

    def __bool__(self) -> bool:
        return bool(self.values)

    def merged(self, other: Masker) -> Masker:
        return Masker([*self.values, *other.values])
