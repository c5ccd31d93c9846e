"""A Jupyter notebook as text for the model: each cell's source and text outputs, bounded.

The model reads notebooks to understand and edit them, so the render keeps what it needs (cell
ids, types, execution counts, sources, text outputs) and drops what only costs tokens (base64
images, widget state, ANSI colours). Big outputs and big notebooks are cut with a ``jq`` hint
that reaches the rest. Used by read_file for ``.ipynb`` files and reusable for live notebooks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_CELL_OUTPUT_CHARS = 10_000
MAX_RENDER_CHARS = 100_000

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*(?:\x07|\x1b\\)")
_MIME = re.compile(r"^[\w.+-]+/[\w.+-]+$")
_KIND_TITLES = {"markdown": "Markdown Cell", "raw": "Raw Cell"}


class NotebookFormatError(ValueError):
    """The text is not a notebook: the message says what is wrong with it."""


@dataclass(frozen=True)
class NotebookRender:
    """The rendered text, and whether the whole-notebook cap cut it (per-cell cuts don't count)."""

    text: str
    truncated: bool = False
    cells: int = 0


def parse_notebook(text: str) -> dict[str, Any]:
    """The notebook JSON as a dict; raises NotebookFormatError when it is not a notebook."""
    try:
        data = json.loads(text.removeprefix("\ufeff"))
    except ValueError as err:
        raise NotebookFormatError(f"it is not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise NotebookFormatError("its JSON is not an object")
    cells = data.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise NotebookFormatError("it has no `cells` array of objects")
    return data


def render_notebook(nb: Mapping[str, Any], *, source: str = "<notebook>") -> NotebookRender:
    """Render a parsed notebook; ``source`` names the file in the ``jq`` hints."""
    cells: Sequence[Mapping[str, Any]] = nb.get("cells") or []
    if not cells:
        return NotebookRender("(empty notebook)")
    language = notebook_language(nb)
    blocks = [f"Jupyter Notebook ({language}, {len(cells)} cells)"]
    used = len(blocks[0])
    for index, cell in enumerate(cells):
        block = render_cell(cell, index, language, source=source)
        if used + len(block) + 2 > MAX_RENDER_CHARS:
            blocks.append(f"[{len(cells) - index} more cell(s) not shown: the render is capped at "
                          f"{MAX_RENDER_CHARS:,} characters. See them with: "
                          f"jq '.cells[{index}:]' {_quote(source)}]")
            return NotebookRender("\n\n".join(blocks), truncated=True, cells=len(cells))
        blocks.append(block)
        used += len(block) + 2
    return NotebookRender("\n\n".join(blocks), cells=len(cells))


def notebook_language(nb: Mapping[str, Any]) -> str:
    """``language_info.name``, else ``kernelspec.language``, else python."""
    meta = nb.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        section = meta.get(key)
        if isinstance(section, Mapping) and isinstance(section.get(field), str) and section[field]:
            return str(section[field])
    return "python"


def cell_display_id(cell: Mapping[str, Any], index: int) -> str:
    """The cell's ``id``, or ``cell-{index}`` when it has none."""
    found = cell.get("id")
    return found if isinstance(found, str) and found else f"cell-{index}"


def render_cell(cell: Mapping[str, Any], index: int, language: str, *,
                source: str = "<notebook>") -> str:
    """One cell block: a header line, then its source (fenced for code) and outputs."""
    cid = cell_display_id(cell, index)
    text = _joined(cell.get("source"))
    kind = cell.get("cell_type")
    if kind != "code":
        title = _KIND_TITLES.get(kind if isinstance(kind, str) else "", "Cell")
        return f"--- {title} {cid} ---\n{text}"
    count = cell.get("execution_count")
    bracket = f" [{count}]" if count is not None else ""
    block = f"--- Code Cell {cid}{bracket} ---\n```{language}\n{text}\n```"
    outputs = render_outputs(cell.get("outputs"))
    if not outputs:
        return block
    if len(outputs) > MAX_CELL_OUTPUT_CHARS:
        outputs = (outputs[:MAX_CELL_OUTPUT_CHARS] + f"\n[output truncated: {len(outputs):,} "
                   f"characters in all. See them with: jq '.cells[{index}].outputs' "
                   f"{_quote(source)}]")
    return f"{block}\nOutput:\n{outputs}"


def render_outputs(outputs: object) -> str:
    """A code cell's outputs as text, one after another; empty ones dropped."""
    if not isinstance(outputs, list):
        return ""
    texts = (_ANSI.sub("", _output_text(o)).rstrip("\n") for o in outputs
             if isinstance(o, Mapping))
    return "\n".join(t for t in texts if t.strip())


def _output_text(output: Mapping[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _joined(output.get("text"))
    if kind in ("execute_result", "display_data"):
        data = output.get("data")
        data = data if isinstance(data, Mapping) else {}
        if "text/plain" in data:
            return _joined(data["text/plain"])
        mimes = [k for k in data if isinstance(k, str) and _MIME.match(k)]
        return f"[non-text output: {', '.join(mimes)}]" if mimes else ""
    if kind == "error":
        head = f"{_joined(output.get('ename'))}: {_joined(output.get('evalue'))}"
        trace = output.get("traceback")
        lines = [str(x) for x in trace] if isinstance(trace, list) else []
        return "\n".join([head, *lines])
    return ""


def _joined(value: object) -> str:
    """A notebook string field: a string or a list of strings."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return "" if value is None else str(value)


def _quote(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'" if re.search(r"[^\w@%+=:,./-]", path) else path
