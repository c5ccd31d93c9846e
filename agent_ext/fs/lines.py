"""Lines of a large text file without holding the file in memory.

``scan_lines`` makes one pass in chunks: the line count, the SHA-256 of the bytes and the
encoding; ``pick_lines`` makes a second pass that keeps only the lines asked for. Lines are
counted and decoded as ``decode_text`` does for the whole file (BOM, then strict UTF-8, then a
legacy guess; ``\\r\\n`` read as ``\\n``; a file with only ``\\r`` breaks split on them), except
that the legacy guess is made from the first chunks rather than the whole file. Every step works
on one chunk, so a thread running it lets others run between chunks.
"""

from __future__ import annotations

import bisect
import codecs
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .textio import _BOMS, _legacy_encoding

CHUNK_BYTES = 256 * 1024
_SAMPLE_BYTES = 1024 * 1024


def split_lines(text: str) -> list[str]:
    """Lines as a reader counts them: a final newline ends the last line, it adds none."""
    if not text:
        return []
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


@dataclass(frozen=True)
class LineScan:
    """What one pass over a text file found: ``total`` lines, the bytes' ``digest``, how it
    decodes (``encoding``, after ``skip`` bytes of BOM) and the line break it splits on."""

    total: int
    digest: str
    encoding: str
    skip: int
    separator: str


def scan_lines(f: BinaryIO) -> LineScan:
    """Count the lines of the open file ``f`` (read from its start) in one chunked pass."""
    head = _read_at(f, 0, _SAMPLE_BYTES)
    for encoding, skip in _candidates(head):
        try:
            return _scan(f, encoding, skip)
        except UnicodeDecodeError:
            continue
    return _scan(f, "latin-1", 0)  # every byte decodes


def pick_lines(f: BinaryIO, scan: LineScan, wanted: set[int]) -> dict[int, str]:
    """The lines numbered in ``wanted`` (from 1), read in one pass that stops after the last."""
    order = sorted(n for n in wanted if 1 <= n <= scan.total)
    out: dict[int, str] = {}
    if not order:
        return out
    sep = scan.separator
    line = 1          # the line the text after the last break belongs to
    carry: list[str] = []
    for text in _chunks(f, scan.encoding, scan.skip, None):
        breaks = text.count(sep)
        if not breaks:
            if _wants(order, line, line):
                carry.append(text)
            continue
        if _wants(order, line, line + breaks):
            pieces = text.split(sep)
            for i, piece in enumerate(pieces[:-1]):
                n = line + i
                if n in wanted:
                    whole = "".join(carry) + piece if i == 0 else piece
                    out[n] = whole[:-1] if sep == "\n" and whole.endswith("\r") else whole
            tail = pieces[-1]
        else:
            tail = text[text.rfind(sep) + 1:]
        line += breaks
        carry = [tail] if line in wanted else []
        if line > order[-1]:
            return out
    if carry and line in wanted:
        out[line] = "".join(carry)
    return out


def _wants(order: list[int], first: int, last: int) -> bool:
    """Whether a line from ``first`` to ``last`` (inclusive) is in the sorted ``order``."""
    at = bisect.bisect_left(order, first)
    return at < len(order) and order[at] <= last


def _candidates(head: bytes) -> Iterator[tuple[str, int]]:
    for bom, name in _BOMS:
        if head.startswith(bom):
            yield name, len(bom)
    yield "utf-8", 0
    guess = _legacy_encoding(head)
    if guess != "latin-1":
        yield guess, 0


def _scan(f: BinaryIO, encoding: str, skip: int) -> LineScan:
    digest = hashlib.sha256()
    lf = cr = 0
    last = ""
    for text in _chunks(f, encoding, skip, digest):
        lf += text.count("\n")
        cr += text.count("\r")
        if text:
            last = text[-1]
    separator = "\r" if not lf and cr else "\n"
    breaks = cr if separator == "\r" else lf
    total = breaks + (1 if last and last != separator else 0)
    return LineScan(total, digest.hexdigest(), encoding, skip, separator)


def _chunks(f: BinaryIO, encoding: str, skip: int, digest: hashlib._Hash | None
            ) -> Iterator[str]:
    """The file's text chunk by chunk; every byte read goes into ``digest``."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    f.seek(0)
    while True:
        raw = f.read(CHUNK_BYTES)
        if digest is not None:
            digest.update(raw)
        body = raw[skip:]
        skip = max(0, skip - len(raw))
        text = decoder.decode(body, final=not raw)
        yield text
        if not raw:
            return


def _read_at(f: BinaryIO, offset: int, size: int) -> bytes:
    f.seek(offset)
    return f.read(size)
