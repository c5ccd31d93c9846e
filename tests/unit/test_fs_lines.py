"""The chunked line reader agrees with reading the whole file, across every chunk boundary."""

from __future__ import annotations

import hashlib
import io

import pytest

from agent_ext.fs import decode_text
from agent_ext.fs import lines as lines_module
from agent_ext.fs.lines import pick_lines, scan_lines, split_lines

CASES = {
    "lf": b"alpha\nbeta\n\ngamma\n",
    "no final newline": b"alpha\nbeta",
    "crlf": b"one\r\ntwo\r\nthree\r\n",
    "mixed": b"one\r\ntwo\nthree\r\nfour\n",
    "lone cr inside lf lines": b"a\rb\nc\n",
    "cr only": b"old\rmac\rlines\r",
    "cr at the very end without lf": b"a\nb\r",
    "utf-8 bom": b"\xef\xbb\xbfcaf\xc3\xa9\nna\xc3\xafve\n",
    "utf-16 bom": "\ufeffzw\u00f6lf\r\nelf\r\n".encode("utf-16-le"),
    "latin-1": "caf\u00e9\nna\u00efve\n".encode("latin-1"),
    "multi-byte characters": "\u4e2d\u6587\n\U0001f600 smile\n".encode(),
    "blank lines only": b"\n\n\n",
}


def whole(data: bytes) -> list[str]:
    return split_lines(decode_text(data).text)


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 256 * 1024])
@pytest.mark.parametrize("name", list(CASES))
def test_lines_match_the_whole_file_read(name: str, chunk: int,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines_module, "CHUNK_BYTES", chunk)
    data = CASES[name]
    f = io.BytesIO(data)
    scan = scan_lines(f)
    expected = whole(data)
    assert scan.total == len(expected)
    assert scan.digest == hashlib.sha256(data).hexdigest()
    picked = pick_lines(f, scan, set(range(1, scan.total + 1)))
    assert [picked[n] for n in range(1, scan.total + 1)] == expected


def test_only_the_lines_asked_for_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines_module, "CHUNK_BYTES", 64)
    data = b"".join(f"line {n}\r\n".encode() for n in range(1, 5001))
    f = io.BytesIO(data)
    scan = scan_lines(f)
    assert scan.total == 5000
    assert pick_lines(f, scan, {1, 2500, 5000, 6000}) == {
        1: "line 1", 2500: "line 2500", 5000: "line 5000"}


def test_a_line_longer_than_many_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines_module, "CHUNK_BYTES", 10)
    data = b"short\n" + b"x" * 1000 + b"\nlast"
    f = io.BytesIO(data)
    scan = scan_lines(f)
    assert scan.total == 3
    assert pick_lines(f, scan, {2, 3}) == {2: "x" * 1000, 3: "last"}


def test_an_empty_file() -> None:
    f = io.BytesIO(b"")
    scan = scan_lines(f)
    assert scan.total == 0
    assert pick_lines(f, scan, {1}) == {}


def test_invalid_utf8_past_the_first_chunk_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines_module, "CHUNK_BYTES", 16)
    data = b"plain ascii text here\n" * 10 + "caf\u00e9\n".encode("latin-1")
    f = io.BytesIO(data)
    scan = scan_lines(f)
    assert scan.encoding != "utf-8"
    assert pick_lines(f, scan, {11})[11] == "caf\u00e9"
