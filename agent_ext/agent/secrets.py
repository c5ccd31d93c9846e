"""Secrets never reach the model: secret values in tool results become ``[secret:NAME]``.

A command that echoes ``$OPENAI_API_KEY`` or a file that stores a token would otherwise send the
value to the model provider and into saved transcripts. The masker knows the values of
secret-looking environment variables (re-read whenever the environment changes) and values
registered explicitly (``%agent key``), and replaces every plain occurrence with the name; it
also recognises credentials by their shape wherever they come from (``_secret_formats``), in
UTF-16 text, and across the chunks of streamed output (``StreamMasker``).

Masking guards against accidents, not against a determined reader: a secret that is encoded
(base64, reversed) or printed in pieces is not recognised.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from dataclasses import replace
from urllib.parse import urlsplit

from agent_ext.core import Part, TextPart, ToolError, ToolResult

from ._secret_formats import (
    KEY_START,
    MARKER_CHARS,
    MAX_HELD,
    PARTIAL_MARKER,
    TOKEN_TAIL,
    TOKEN_TAIL_CHARS,
    spans,
)

MIN_LENGTH = 8
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|KEY|KEY_ID|TOKEN|SECRET|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|PAT|PASS"
    r"|PWD|SK|DSN|AUTH|COOKIE|SALT|WEBHOOK(?:_URL)?|CONN(?:ECTION)?_STRING|DATABASE_URL)$"
    r"|PASSWORD|PASSWD|SECRET", re.IGNORECASE)
#: Secret-looking names whose values are not secrets.
_NOT_SECRET = frozenset({"PWD", "OLDPWD"})
_URL_CREDENTIALS = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")
_MAX_DEPTH = 8


def looks_secret(name: str) -> bool:
    """Whether an environment variable of this name holds a secret (``*_KEY``, ``*TOKEN``...)."""
    return name.upper() not in _NOT_SECRET and _SECRET_NAME.search(name) is not None


class SecretMasker:
    """Replaces secret values with ``[secret:NAME]`` in text and tool results.

    The environment is re-checked on every use (one pass over its items); the compiled pattern
    (one alternation of escaped values, longest first) is rebuilt only when the set changes.
    Values shorter than ``min_length`` are ignored: they would mask ordinary words.
    """

    def __init__(self, environ: Mapping[str, str] | None = None, *,
                 min_length: int = MIN_LENGTH) -> None:
        self._environ: Mapping[str, str] = os.environ if environ is None else environ
        self.min_length = min_length
        self._registered: dict[str, str] = {}
        self._from_env: dict[str, str] = {}
        self._snapshot: tuple[tuple[str, str], ...] | None = None
        self._pattern: re.Pattern[str] | None = None
        self._labels: dict[str, str] = {}
        self._lock = threading.Lock()

    # -- what is secret -------------------------------------------------------------------------

    def register(self, value: str, name: str = "registered") -> None:
        """Mask ``value`` from now on as ``[secret:name]`` (e.g. a key given to ``%agent key``)."""
        if len(value) >= self.min_length:
            with self._lock:
                self._registered[value] = name
                self._pattern = None

    def unregister(self, value: str) -> None:
        with self._lock:
            if self._registered.pop(value, None) is not None:
                self._pattern = None

    def refresh(self) -> bool:
        """Re-read the environment; True when the set of secret values changed."""
        snapshot = tuple(sorted((k, v) for k, v in self._environ.items()
                                if v and (looks_secret(k) or "://" in v)))
        with self._lock:
            if snapshot == self._snapshot:
                return False
            self._snapshot = snapshot
            found: dict[str, str] = {}
            for name, value in snapshot:
                if looks_secret(name) and len(value) >= self.min_length:
                    found.setdefault(value, name)
                password = _url_password(value)
                if password is not None and len(password) >= self.min_length:
                    found.setdefault(password, name)
            changed = found != self._from_env
            self._from_env = found
            if changed:
                self._pattern = None
            return changed

    def values(self) -> list[str]:
        """The known secret values (for the stream masker; never shown)."""
        self._current()
        return list(self._labels)

    @property
    def names(self) -> list[str]:
        """The names secrets are masked as (never the values)."""
        self._current()
        return sorted(set(self._labels.values()))

    @property
    def longest(self) -> int:
        """The length of the longest known secret value (0 when none is known)."""
        self._current()
        return max(map(len, self._labels), default=0)

    def _current(self) -> re.Pattern[str] | None:
        self.refresh()
        with self._lock:
            if self._pattern is None:
                labels = {**self._from_env, **self._registered}
                self._labels = labels
                if labels:
                    ordered = sorted(labels, key=len, reverse=True)
                    self._pattern = re.compile("|".join(map(re.escape, ordered)))
            return self._pattern if self._labels else None

    # -- masking --------------------------------------------------------------------------------

    def mask(self, text: str) -> str:
        """``text`` with every secret replaced by ``[secret:NAME]``."""
        if not text:
            return text
        return self._sub(self._current(), text)

    def _sub(self, pattern: re.Pattern[str] | None, text: str) -> str:
        masked = self._sub_plain(pattern, text)
        if "\x00" in masked:
            # UTF-16 text read as single bytes: each character followed by a NUL.
            joined = masked.replace("\x00", "")
            hidden = self._sub_plain(pattern, joined)
            if hidden != joined:
                return hidden
        return masked

    def _sub_plain(self, pattern: re.Pattern[str] | None, text: str) -> str:
        if pattern is not None and pattern.search(text) is not None:
            labels = self._labels
            text = pattern.sub(lambda m: f"[secret:{labels.get(m.group(0), 'registered')}]",
                               text)
        found = spans(text)
        if not found:
            return text
        out: list[str] = []
        at = 0
        for start, end, label in found:
            out += [text[at:start], f"[secret:{label}]"]
            at = end
        out.append(text[at:])
        return "".join(out)

    def mask_result(self, result: ToolResult) -> ToolResult:
        """A copy of ``result`` with secrets masked in its content, display and error.

        Returns ``result`` itself when nothing needed masking. Images are left alone.
        """
        pattern = self._current()
        content = result.llm_content
        if isinstance(content, str):
            new_content: str | list[Part] = self._sub(pattern, content)
        else:
            new_content = [TextPart(self._sub(pattern, p.text)) if isinstance(p, TextPart)
                           else p for p in content]
        display = self._mask_object(pattern, result.display, 0)
        error = result.error
        if error is not None:
            error = ToolError(error.code, self._sub(pattern, error.message))
        if new_content == content and display is result.display and error == result.error:
            return result
        return replace(result, llm_content=new_content, display=display, error=error)

    def _mask_object(self, pattern: re.Pattern[str] | None, value: object, depth: int) -> object:
        """Strings inside str/list/tuple/dict values (keys kept); other objects as they are."""
        if depth > _MAX_DEPTH:
            return value
        if isinstance(value, str):
            masked = self._sub(pattern, value)
            return value if masked == value else masked
        if isinstance(value, (list, tuple)):
            items = [self._mask_object(pattern, v, depth + 1) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return tuple(items) if isinstance(value, tuple) else items
        if isinstance(value, dict):
            masked_dict = {k: self._mask_object(pattern, v, depth + 1) for k, v in value.items()}
            if all(masked_dict[k] is v for k, v in value.items()):
                return value
            return masked_dict
        return value


def _url_password(value: str) -> str | None:
    """The password of ``scheme://user:password@host`` values (database URLs), else None."""
    if _URL_CREDENTIALS.match(value) is None:
        return None
    try:
        return urlsplit(value).password
    except ValueError:
        return None


class StreamMasker:
    """Masks streamed output chunk by chunk, holding back what could be the start of a secret.

    A secret cut in two by a chunk boundary would pass unseen in each half, so each chunk's
    tail that could begin a secret (a prefix of a known value, a run of token characters, an
    unterminated private key block) waits for the next chunk; ``flush`` releases the rest.
    """

    def __init__(self, masker: SecretMasker) -> None:
        self.masker = masker
        self._pending = ""

    def feed(self, chunk: str) -> str:
        text = self._pending + chunk
        cut = self._safe_end(text)
        self._pending = text[cut:]
        return self.masker.mask(text[:cut]) if cut else ""

    def flush(self) -> str:
        rest, self._pending = self._pending, ""
        return self.masker.mask(rest) if rest else ""

    def _safe_end(self, text: str) -> int:
        """Where the part that cannot hold the start of a cut secret ends."""
        cut = len(text)
        block = KEY_START.search(text)
        if block is not None and len(text) - block.start() <= MAX_HELD:
            cut = block.start()
        for pattern, longest in ((TOKEN_TAIL, TOKEN_TAIL_CHARS), (PARTIAL_MARKER, MARKER_CHARS)):
            # Only the last stretch can hold a match that ends the text: searching all of a
            # long run of token characters would try every start in it.
            tail = pattern.search(text, max(0, cut - longest), cut)
            if tail is not None:
                cut = min(cut, tail.start())
        longest = self.masker.longest
        for size in range(min(longest - 1, cut), 0, -1):
            suffix = text[cut - size:cut]
            if any(value.startswith(suffix) for value in self.masker.values()):
                return cut - size
        return cut
