"""Cell outputs for the model: text it can read and images it can see, within a budget.

Outputs are where notebooks overflow a model's context (a 50k-line print, a dozen plots) or go
invisible (images dropped). Here each output becomes text (ANSI colours stripped) or an image
part; images beyond the read's budget are named with where to see them instead.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_ext.core.result import ImagePart

from .jsonstyle import join_source

MAX_IMAGES = 4
MAX_IMAGE_BYTES = 4 * 2**20
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")
TEXT_MIMES = ("text/plain", "text/markdown", "text/latex")

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_MIME = re.compile(r"^[\w.+-]+/[\w.+-]+$")

Piece = str | ImagePart


@dataclass
class ImageBudget:
    """How many images (and bytes of them) one read may still return."""

    max_images: int = MAX_IMAGES
    max_bytes: int = MAX_IMAGE_BYTES
    images: int = 0
    bytes: int = 0
    withheld: int = 0

    def take(self, size: int) -> bool:
        """Spend the budget on an image of ``size`` bytes; False when it does not fit."""
        if self.images >= self.max_images or self.bytes + size > self.max_bytes:
            self.withheld += 1
            return False
        self.images += 1
        self.bytes += size
        return True


def strip_ansi(text: str) -> str:
    """``text`` without terminal colour and cursor escapes."""
    return _ANSI.sub("", text)


def output_pieces(outputs: Sequence[object], budget: ImageBudget | None, *,
                  where: str) -> list[Piece]:
    """The outputs as text and image pieces; ``where`` says how to see a withheld image."""
    pieces: list[Piece] = []
    for output in outputs:
        if not isinstance(output, Mapping):
            continue
        for piece in _pieces(output, budget, where):
            if isinstance(piece, ImagePart):
                pieces.append(piece)
                continue
            text = strip_ansi(piece).rstrip("\n")
            if text.strip():
                pieces.append(text)
    return pieces


def outputs_text(outputs: Sequence[object]) -> str:
    """The outputs as text alone (images named, not attached)."""
    return "\n".join(p for p in output_pieces(outputs, None, where="") if isinstance(p, str))


def _pieces(output: Mapping[str, Any], budget: ImageBudget | None, where: str) -> list[Piece]:
    kind = output.get("output_type")
    if kind == "stream":
        return [join_source(output.get("text"))]
    if kind == "error":
        head = f"{join_source(output.get('ename'))}: {join_source(output.get('evalue'))}"
        trace = output.get("traceback")
        lines = [str(x) for x in trace] if isinstance(trace, list) else []
        return ["\n".join([head, *lines])]
    if kind not in ("execute_result", "display_data"):
        return []
    data = output.get("data")
    data = data if isinstance(data, Mapping) else {}
    pieces: list[Piece] = []
    text_mime = next((m for m in TEXT_MIMES if m in data), None)
    if text_mime is not None:
        pieces.append(join_source(data[text_mime]))
    images = [m for m in IMAGE_MIMES if m in data]
    if images:
        pieces.extend(_image(images[0], data[images[0]], budget, where))
    if not pieces:
        mimes = [k for k in data if isinstance(k, str) and _MIME.match(k)]
        if mimes:
            pieces.append(f"[non-text output: {', '.join(mimes)}]")
    return pieces


def _image(mime: str, value: object, budget: ImageBudget | None, where: str) -> list[Piece]:
    try:
        raw = base64.b64decode(join_source(value).replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return [f"[{mime} output that is not valid base64]"]
    size = f"{len(raw) / 1024:,.1f} KB" if len(raw) >= 1024 else f"{len(raw)} bytes"
    if budget is None:
        return [f"[{mime}, {size}]"]
    if budget.take(len(raw)):
        return [f"[{mime}, {size}, attached]", ImagePart(raw, mime)]
    hint = f" See it with read_file {where}." if where else ""
    return [(f"[{mime}, {size}: not attached, this read's image budget "
             f"({budget.max_images} images, {budget.max_bytes // 2**20} MB) is used up.{hint}]")]
