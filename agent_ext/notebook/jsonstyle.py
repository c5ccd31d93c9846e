"""How a .ipynb file spells its JSON, so a write changes only the cells that changed.

A notebook in git should diff by the lines the agent touched. So a write keeps the file's
indent, trailing newline, BOM, line endings, ASCII escaping, key order, and whether each
source is one string or a list of lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_INDENT = re.compile(r"^\{\s*?\n([ \t]+)\"", re.DOTALL)
_NON_ASCII_ESCAPE = re.compile(r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}"
                               r"|[1-9a-fA-F][0-9a-fA-F]{3})")
_SPLIT_MIMES = ("application/javascript", "image/svg+xml")


@dataclass(frozen=True)
class JsonStyle:
    """The spelling of one .ipynb file's JSON (nbformat's own style by default)."""

    indent: int | str = 1
    trailing_newline: bool = True
    bom: bool = False
    crlf: bool = False
    ensure_ascii: bool = False

    @classmethod
    def detect(cls, text: str) -> JsonStyle:
        """The style of ``text``, the file's decoded content."""
        bom = text.startswith("\ufeff")
        body = text.removeprefix("\ufeff")
        found = _INDENT.match(body)
        indent: int | str = 1
        if found is not None:
            white = found[1]
            indent = "\t" if "\t" in white else len(white)
        elif body.lstrip().startswith("{") and "\n" not in body.strip():
            indent = 0
        return cls(indent=indent, trailing_newline=body.endswith("\n"), bom=bom,
                   crlf="\r\n" in body,
                   ensure_ascii=body.isascii() and bool(_NON_ASCII_ESCAPE.search(body)))

    def dumps(self, nb: Mapping[str, Any]) -> bytes:
        """The notebook as bytes in this style."""
        indent = None if self.indent == 0 else self.indent
        text = json.dumps(nb, indent=indent, ensure_ascii=self.ensure_ascii,
                          separators=(",", ": ") if indent is not None else (",", ":"))
        if self.trailing_newline:
            text += "\n"
        if self.crlf:
            text = text.replace("\n", "\r\n")
        if self.bom:
            text = "\ufeff" + text
        return text.encode("utf-8")


def join_source(value: object) -> str:
    """A notebook string field (a string or a list of strings) as one string."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return "" if value is None else str(value)


def spell_source(text: str, as_lines: bool) -> str | list[str]:
    """``text`` as a line list (nbformat's on-disk form) or as one string."""
    return text.splitlines(keepends=True) if as_lines else text


def uses_lines(value: object) -> bool:
    """Whether a stored source is a list of lines."""
    return isinstance(value, list)


def spell_outputs(outputs: list[dict[str, Any]], as_lines: bool) -> list[dict[str, Any]]:
    """Outputs with multi-line text split into lines when the file stores text that way."""
    if not as_lines:
        return [dict(o) for o in outputs]
    spelled = []
    for output in outputs:
        out = dict(output)
        if out.get("output_type") == "stream" and isinstance(out.get("text"), str):
            out["text"] = out["text"].splitlines(keepends=True)
        data = out.get("data")
        if isinstance(data, Mapping):
            out["data"] = {
                k: (v.splitlines(keepends=True) if isinstance(v, str)
                    and (k.startswith("text/") or k in _SPLIT_MIMES) else v)
                for k, v in data.items()}
        spelled.append(out)
    return spelled
