"""Text I/O keeps encoding, BOM and line endings; binary files are recognised, not decoded."""

from __future__ import annotations

import stat
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_ext.fs import (
    BinaryFileError,
    TextEncodeError,
    decode_text,
    encode_text,
    is_binary,
    read_text,
    sniff_binary,
    textio,
    write_text,
)


def _round_trip(data: bytes) -> None:
    assert decode_text(data).encode() == data


@pytest.fixture
def no_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textio, "_charset_normalizer", lambda: None)


def _fake_detector(monkeypatch: pytest.MonkeyPatch, encoding: str | None) -> None:
    best = types.SimpleNamespace(encoding=encoding) if encoding else None
    results = types.SimpleNamespace(best=lambda: best)
    module: Any = types.SimpleNamespace(from_bytes=lambda data: results)
    monkeypatch.setattr(textio, "_charset_normalizer", lambda: module)


def test_utf8_plain() -> None:
    tf = decode_text("héllo\nwörld\n".encode())
    assert (tf.text, tf.encoding, tf.bom, tf.newline, tf.mixed) == (
        "héllo\nwörld\n", "utf-8", False, "\n", False)
    _round_trip("héllo\nwörld\n".encode())


def test_utf8_bom_is_kept() -> None:
    data = b"\xef\xbb\xbfname = 1\n"
    tf = decode_text(data)
    assert tf.text == "name = 1\n" and tf.encoding == "utf-8" and tf.bom
    assert tf.encode("name = 2\n") == b"\xef\xbb\xbfname = 2\n"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_boms(codec: str) -> None:
    bom = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff",
           "utf-32-le": b"\xff\xfe\x00\x00", "utf-32-be": b"\x00\x00\xfe\xff"}[codec]
    data = bom + "a\r\nb ☃\r\n".encode(codec)
    tf = decode_text(data)
    assert (tf.text, tf.encoding, tf.bom, tf.newline) == ("a\nb ☃\n", codec, True, "\r\n")
    _round_trip(data)
    assert tf.encode("a\nc\n") == bom + "a\r\nc\r\n".encode(codec)


def test_crlf_round_trip_and_new_lines_get_crlf() -> None:
    data = b"one\r\ntwo\r\nthree"
    tf = decode_text(data)
    assert tf.text == "one\ntwo\nthree" and tf.newline == "\r\n" and not tf.mixed
    _round_trip(data)
    assert tf.encode("one\nTWO\ninserted\nthree") == b"one\r\nTWO\r\ninserted\r\nthree"


def test_mixed_endings_keep_each_unchanged_line_as_it_was() -> None:
    data = b"a\r\nb\nc\r\nd\r\ne\n"
    tf = decode_text(data)
    assert tf.mixed and tf.newline == "\r\n" and tf.text == "a\nb\nc\nd\ne\n"
    _round_trip(data)
    edited = tf.encode("a\nb\nC!\nnew\nd\ne\n")
    assert edited == b"a\r\nb\nC!\r\nnew\r\nd\r\ne\n"


def test_mixed_endings_with_edits_at_both_ends() -> None:
    data = b"x\ny\r\nz\n"
    tf = decode_text(data)
    assert tf.newline == "\n"
    assert tf.encode("top\nx\ny\nz\nbottom\n") == b"top\nx\ny\r\nz\nbottom\n"
    assert tf.encode("") == b""


def test_lone_cr_is_left_untouched() -> None:
    lf = decode_text(b"progress\r50%\ndone\n")
    assert lf.text == "progress\r50%\ndone\n" and lf.newline == "\n"
    _round_trip(b"progress\r50%\ndone\n")
    crlf = decode_text(b"a\rb\r\nc\r\n")
    assert crlf.text == "a\rb\nc\n" and crlf.newline == "\r\n"
    _round_trip(b"a\rb\r\nc\r\n")


def test_classic_mac_cr_only_file() -> None:
    tf = decode_text(b"one\rtwo\r")
    assert tf.text == "one\ntwo\n" and tf.newline == "\r"
    _round_trip(b"one\rtwo\r")
    assert tf.encode("one\ntwo\nthree\n") == b"one\rtwo\rthree\r"


@pytest.mark.usefixtures("no_detector")
def test_legacy_falls_back_to_latin1() -> None:
    data = "café crème\n".encode("latin-1")
    tf = decode_text(data)
    assert tf.encoding == "latin-1" and tf.text == "café crème\n"
    _round_trip(data)


def test_legacy_uses_the_detector_when_its_guess_round_trips(
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = "中文注释\n".encode("gbk")
    _fake_detector(monkeypatch, "gbk")
    tf = decode_text(data)
    assert tf.encoding == "gbk" and tf.text == "中文注释\n"
    assert tf.encode("中文\n") == "中文\n".encode("gbk")


@pytest.mark.parametrize("guess", ["no-such-codec", "utf_16", "ascii", None])
def test_legacy_ignores_guesses_that_do_not_round_trip(
        monkeypatch: pytest.MonkeyPatch, guess: str | None) -> None:
    _fake_detector(monkeypatch, guess)
    data = "naïve\n".encode("latin-1")
    assert decode_text(data).encoding == "latin-1"
    _round_trip(data)


def test_real_detector_if_installed() -> None:
    pytest.importorskip("charset_normalizer")
    data = ("Прошу прощения, это текст в кодировке windows-1251.\n" * 4).encode("cp1251")
    _round_trip(data)


@pytest.mark.usefixtures("no_detector")
def test_characters_the_encoding_cannot_store() -> None:
    tf = decode_text("café\n".encode("latin-1"))
    with pytest.raises(TextEncodeError, match=r"latin-1.*U\+2603.*UTF-8"):
        tf.encode("café ☃\n")


def test_bom_lookalike_that_is_not_utf16() -> None:
    data = "ÿþ is y-umlaut and thorn\n".encode("latin-1")  # odd length: not UTF-16
    tf = decode_text(data)
    assert not tf.bom and tf.encoding != "utf-16-le"
    _round_trip(data)


@given(st.binary(max_size=300))
def test_any_bytes_round_trip(data: bytes) -> None:
    _round_trip(data)


@given(st.lists(st.sampled_from(["a", "é", "\r", "\n", "\r\n", "\r\r\n", "中", "\t"]),
                max_size=40),
       st.sampled_from(["utf-8", "utf-16-le", "latin-1"]))
def test_line_ending_soups_round_trip(pieces: list[str], codec: str) -> None:
    text = "".join(pieces)
    try:
        data = text.encode(codec)
    except UnicodeEncodeError:
        return
    if codec == "utf-16-le":
        data = b"\xff\xfe" + data
    _round_trip(data)


def test_new_file_defaults() -> None:
    assert encode_text("a\nb\n") == b"a\nb\n"


def test_read_and_write_text_keep_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfline one\r\nline two\r\n")
    path.chmod(0o640)
    tf = read_text(path)
    assert tf.mode == 0o640 and tf.bom and tf.newline == "\r\n"
    written = write_text(path, tf.text.replace("two", "2"), tf)
    assert written == b"\xef\xbb\xbfline one\r\nline 2\r\n" == path.read_bytes()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_write_text_new_file(tmp_path: Path) -> None:
    path = tmp_path / "new.py"
    assert write_text(path, "x = 1\n") == b"x = 1\n"
    assert path.read_bytes() == b"x = 1\n"


HEADS = {
    "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF",
    "gif": b"GIF89a\x01\x00\x01\x00",
    "pdf": b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n",
    "zip": b"PK\x03\x04\x14\x00\x00\x00",
    "elf": b"\x7fELF\x02\x01\x01\x00",
    "gzip": b"\x1f\x8b\x08\x00",
    "sqlite": b"SQLite format 3\x00",
    "webp": b"RIFF\x24\x00\x00\x00WEBPVP8 ",
    "wasm": b"\x00asm\x01\x00\x00\x00",
    "mp3": b"ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb",
}


@pytest.mark.parametrize(("kind", "head"), sorted(HEADS.items()))
def test_binary_magic(tmp_path: Path, kind: str, head: bytes) -> None:
    path = tmp_path / f"file.{kind}"
    path.write_bytes(head + bytes(range(256)))
    assert is_binary(path) == kind
    with pytest.raises(BinaryFileError, match=kind) as info:
        read_text(path)
    assert info.value.kind == kind


def test_nul_bytes_mean_binary() -> None:
    assert sniff_binary(b"hello\x00world") == "binary"
    lone_surrogates = b"\xff\xfe" + b"\x00\xdc" * 8 + b"\x00" * 8
    assert sniff_binary(lone_surrogates) == "binary", "a BOM alone does not make text"


@pytest.mark.parametrize("data", [
    b"plain text\n", b"", b"ID3 tags are metadata\n", b"MZ-style heading\n",
    b"\xff\xfeh\x00i\x00", b"\xfe\xff\x00h\x00i", "é".encode() * 5000,
    b"ID3 " + "é".encode() * 5000,  # the 8 KB window cuts a character in half
])
def test_text_is_not_binary(data: bytes) -> None:
    assert sniff_binary(data[:8192]) is None


def test_utf16_file_reads_as_text(tmp_path: Path) -> None:
    path = tmp_path / "u16.txt"
    path.write_bytes(b"\xff\xfe" + "hi\n".encode("utf-16-le"))
    assert is_binary(path) is None
    assert read_text(path).text == "hi\n"


def test_an_edit_in_a_mixed_file_keeps_every_ending_outside_the_replaced_text() -> None:
    data = b"one\r\ntwo\nthree\r\nfour\nfive\r\n"
    like = decode_text(data)
    assert like.mixed
    assert encode_text(like.text.replace("three", "3"), like) == (
        b"one\r\ntwo\n3\r\nfour\nfive\r\n")
    assert encode_text(like.text.replace("two\nthree", "TWO"), like) == (
        b"one\r\nTWO\r\nfour\nfive\r\n")
    assert encode_text(like.text.replace("four", "4\n4b"), like).startswith(
        b"one\r\ntwo\nthree\r\n4")
    assert encode_text(like.text.replace("four", "4\n4b"), like).endswith(b"4b\nfive\r\n")
