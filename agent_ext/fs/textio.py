"""Text files in and out, keeping their encoding, BOM and line endings.

The model works on ``\\n`` text; the file keeps what it had. An edit to a CRLF, UTF-16 or GBK
file therefore changes only the lines the model changed, never every byte of the file.
"""

from __future__ import annotations

import difflib
import importlib
import os
import stat
from dataclasses import dataclass, field
from typing import Any, Literal

from .atomic import atomic_write

Newline = Literal["\n", "\r\n", "\r"]

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
)
_BOM_BY_ENCODING = {name: bom for bom, name in _BOMS}
_SNIFF_BYTES = 8192
# Magic numbers of common binary formats. Printable ones (ID3, OggS, ...) only count when the
# head is not valid UTF-8 either, so a text file that happens to start with them stays text.
_MAGIC: tuple[tuple[bytes, str, bool], ...] = (
    (b"\x89PNG\r\n\x1a\n", "png", True), (b"\xff\xd8\xff", "jpeg", True),
    (b"GIF87a", "gif", True), (b"GIF89a", "gif", True), (b"%PDF-", "pdf", True),
    (b"PK\x03\x04", "zip", True), (b"PK\x05\x06", "zip", True), (b"\x1f\x8b", "gzip", True),
    (b"BZh", "bzip2", False), (b"\xfd7zXZ\x00", "xz", True), (b"(\xb5/\xfd", "zstd", True),
    (b"7z\xbc\xaf\x27\x1c", "7z", True), (b"Rar!\x1a\x07", "rar", True),
    (b"\x7fELF", "elf", True), (b"\xcf\xfa\xed\xfe", "mach-o", True),
    (b"\xce\xfa\xed\xfe", "mach-o", True), (b"\xca\xfe\xba\xbe", "mach-o/java-class", True),
    (b"MZ", "exe", False), (b"\x00asm", "wasm", True), (b"SQLite format 3\x00", "sqlite", True),
    (b"II*\x00", "tiff", True), (b"MM\x00*", "tiff", True), (b"OggS", "ogg", False),
    (b"fLaC", "flac", False), (b"ID3", "mp3", False), (b"wOFF", "woff", False),
    (b"wOF2", "woff2", False), (b"PAR1", "parquet", False), (b"\x93NUMPY", "npy", True),
    (b"\x89HDF\r\n\x1a\n", "hdf5", True),
)
_RIFF = {b"WEBP": "webp", b"WAVE": "wav", b"AVI ": "avi"}


class BinaryFileError(ValueError):
    """The file is not text; ``kind`` names what it is (``png``, ``elf``, ``binary``)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path} is a binary file ({kind}), not text; it cannot be read or "
                         "edited as text. Inspect or change it with the shell.")
        self.kind = kind


class TextEncodeError(ValueError):
    """The new text holds characters the file's encoding cannot store."""


@dataclass(frozen=True)
class TextFile:
    """Decoded text (``\\n`` line endings) plus what is needed to write it back the same way.

    ``newline`` is the file's ending (the most common one when ``mixed``). A lone ``\\r`` in a
    file that also has ``\\n`` stays in ``text`` untouched. ``mode`` is the permission bits.
    """

    text: str
    encoding: str = "utf-8"
    bom: bool = False
    newline: Newline = "\n"
    mixed: bool = False
    mode: int | None = None
    #: For mixed files: each line's original ending, so unchanged lines keep theirs on write.
    endings: tuple[str, ...] = field(default=(), repr=False)

    def encode(self, text: str | None = None) -> bytes:
        """``text`` (default: this file's own) as bytes in this file's encoding, BOM and endings."""
        return encode_text(self.text if text is None else text, self)


def read_text(path: str | os.PathLike[str]) -> TextFile:
    """Read and decode a text file. Raises BinaryFileError for binary files, OSError on I/O."""
    with open(path, "rb") as f:
        mode = stat.S_IMODE(os.fstat(f.fileno()).st_mode)
        data = f.read()
    kind = sniff_binary(data[:_SNIFF_BYTES])
    if kind is not None:
        raise BinaryFileError(os.fspath(path), kind)
    decoded = decode_text(data)
    return TextFile(decoded.text, decoded.encoding, decoded.bom, decoded.newline, decoded.mixed,
                    mode, decoded.endings)


def write_text(path: str | os.PathLike[str], text: str, like: TextFile | None = None) -> bytes:
    """Encode ``text`` like ``like`` (a new file: UTF-8, no BOM, ``\\n``) and write it atomically.

    Returns the bytes written (what the edit history records).
    """
    data = encode_text(text, like)
    atomic_write(path, data)
    return data


def is_binary(path: str | os.PathLike[str]) -> str | None:
    """The binary type of a file (``png``, ``pdf``, ``elf``, ..., ``binary``), or None for text."""
    with open(path, "rb") as f:
        return sniff_binary(f.read(_SNIFF_BYTES))


def sniff_binary(head: bytes) -> str | None:
    """The binary type of a file starting with ``head`` (its first 8 KB), or None for text.

    A UTF-16/32 BOM followed by valid text means text (their NUL bytes are expected); else a
    known magic number, else a NUL byte anywhere in ``head`` means binary.
    """
    if _wide_text(head):
        return None
    if head[:4] == b"RIFF" and head[8:12] in _RIFF:
        return _RIFF[head[8:12]]
    if head[4:8] == b"ftyp":
        return "mp4/heif"
    for magic, kind, strong in _MAGIC:
        if head.startswith(magic) and (strong or b"\x00" in head or not _is_utf8(head)):
            return kind
    return "binary" if b"\x00" in head else None


def decode_text(data: bytes) -> TextFile:
    """Decode bytes: BOM first, then strict UTF-8, then a legacy guess (latin-1 at worst)."""
    encoding, bom, raw = _decode(data)
    newline, mixed = _line_style(raw)
    if mixed:
        lines = raw.split("\n")
        endings = tuple("\r\n" if line.endswith("\r") else "\n" for line in lines[:-1])
        text = raw.replace("\r\n", "\n")
        return TextFile(text, encoding, bom, newline, mixed=True, endings=endings)
    if newline == "\r":
        text = raw.replace("\r", "\n")
    elif newline == "\r\n":
        text = raw.replace("\r\n", "\n")
    else:
        text = raw
    return TextFile(text, encoding, bom, newline)


def encode_text(text: str, like: TextFile | None = None) -> bytes:
    """``\\n`` text as bytes the way ``like`` was stored. Raises TextEncodeError if it cannot."""
    like = like if like is not None else TextFile("")
    if like.mixed:
        out = _restore_mixed(text, like)
    elif like.newline == "\n":
        out = text
    else:
        out = text.replace("\n", like.newline)
    try:
        body = out.encode(like.encoding)
    except UnicodeEncodeError as err:
        bad = err.object[err.start:err.end]
        raise TextEncodeError(
            f"the file is {like.encoding}-encoded and cannot store {bad!r} "
            f"(U+{ord(bad[0]):04X}); use characters {like.encoding} supports, or convert the "
            "file to UTF-8 first") from None
    return (_BOM_BY_ENCODING[like.encoding] if like.bom else b"") + body


def _decode(data: bytes) -> tuple[str, bool, str]:
    for bom, name in _BOMS:
        if data.startswith(bom):
            try:
                return name, True, data[len(bom):].decode(name)
            except UnicodeDecodeError:
                continue  # BOM-like bytes that start a legacy or binary file
    try:
        return "utf-8", False, data.decode("utf-8")
    except UnicodeDecodeError:
        name = _legacy_encoding(data)
        return name, False, data.decode(name)


def _wide_text(head: bytes) -> bool:
    """Whether ``head`` is a UTF-16/32 BOM followed by text that decodes (up to a cut char)."""
    for bom, name in _BOMS:
        if name.startswith("utf-8") or not head.startswith(bom):
            continue
        unit = 4 if "32" in name else 2
        body = head[len(bom):]
        body = body[:len(body) - len(body) % unit]
        try:
            body.decode(name)
        except UnicodeDecodeError as err:
            return err.start >= len(body) - unit
        return True
    return False


def _is_utf8(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start >= len(head) - 3  # a character cut off by the 8 KB window
    return True


def _legacy_encoding(data: bytes) -> str:
    """A common legacy codec that decodes ``data`` and encodes it back byte for byte; else latin-1.

    A statistical guess on little text picks exotic code pages (cp1006 for a lone "é"), so only
    guesses among the encodings source files really use are taken.
    """
    detector = _charset_normalizer()
    if detector is not None:
        name = getattr(detector.from_bytes(data).best(), "encoding", None)
        key = name.lower().replace("-", "_") if isinstance(name, str) else ""
        if key in _COMMON_LEGACY and _round_trips(data, key):
            return key
    return "latin-1"


_COMMON_LEGACY = frozenset({
    "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257",
    "latin_1", "iso8859_2", "iso8859_5", "iso8859_7", "iso8859_9", "iso8859_15", "koi8_r",
    "koi8_u", "mac_roman", "gbk", "gb2312", "gb18030", "big5", "big5hkscs", "shift_jis",
    "cp932", "euc_jp", "euc_kr", "cp949", "cp874", "tis_620",
})


def _round_trips(data: bytes, name: str) -> bool:
    """Whether ``name`` decodes ``data`` and encodes it back byte for byte (so writes are safe)."""
    try:
        return data.decode(name).encode(name) == data
    except (LookupError, UnicodeError):
        return False


def _charset_normalizer() -> Any:
    try:
        return importlib.import_module("charset_normalizer")
    except ImportError:
        return None


def _line_style(raw: str) -> tuple[Newline, bool]:
    """The file's ending, and whether it mixes CRLF with bare LF."""
    crlf = raw.count("\r\n")
    lf = raw.count("\n") - crlf
    if crlf and lf:
        return ("\r\n" if crlf > lf else "\n"), True
    if crlf:
        return "\r\n", False
    if not lf and "\r" in raw:
        return "\r", False
    return "\n", False


def _restore_mixed(text: str, like: TextFile) -> str:
    """Give unchanged lines their original ending and new lines the file's main one.

    Common leading and trailing lines are matched directly, so the line diff only runs over the
    edited middle and stays cheap on large files.
    """
    old, new = like.text.split("\n"), text.split("\n")
    ends: list[str] = [like.newline] * (len(new) - 1)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    pairs = [(k, k) for k in range(head)]
    pairs += [(len(old) - 1 - k, len(new) - 1 - k) for k in range(tail)]
    matcher = difflib.SequenceMatcher(None, old[head:len(old) - tail],
                                      new[head:len(new) - tail], autojunk=False)
    for block in matcher.get_matching_blocks():
        pairs += [(head + block.a + k, head + block.b + k) for k in range(block.size)]
    for i, j in pairs:
        if i < len(like.endings) and j < len(ends):
            ends[j] = like.endings[i]
    _keep_endings_outside_the_change(like.text, text, like.endings, ends)
    return "".join(line + end for line, end in zip(new, [*ends, ""], strict=True))


def _keep_endings_outside_the_change(old: str, new: str, old_ends: tuple[str, ...],
                                     ends: list[str]) -> None:
    """Every line break before the first changed character or after the last one keeps its
    original ending, whatever the line diff paired (an edit inside a line keeps its break)."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    old_breaks = [i for i, ch in enumerate(old) if ch == "\n"]
    shift = len(new) - len(old)
    by_position = dict(zip(old_breaks, old_ends, strict=False))
    for j, position in enumerate(i for i, ch in enumerate(new) if ch == "\n"):
        if j >= len(ends):
            break
        if position < prefix:
            ends[j] = by_position.get(position, ends[j])
        elif position >= len(new) - suffix:
            ends[j] = by_position.get(position - shift, ends[j])

