"""What a tool call returns: content for the model, a display for the user, and a typed error."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TextPart:
    """Plain text for the model."""

    text: str


@dataclass(frozen=True)
class ImagePart:
    """An image for the model (raw bytes; providers get base64)."""

    data: bytes
    mime_type: str = "image/png"

    @property
    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")


Part = TextPart | ImagePart
Content = str | Sequence[Part]


@dataclass(frozen=True)
class ToolError:
    """A model-visible failure: a stable ``code`` and a message that says what to do next."""

    code: str
    message: str


@dataclass(frozen=True)
class RememberedCall:
    """How the model's history keeps a call: as this other call, answered with ``content``.

    A change refused because its file had not been read, where the file was read on the model's
    behalf, is remembered as that read. A model shown its own failed call tends to make it
    again unchanged; after a read it writes the change from what it read. What the user sees
    keeps the call as it was made, and its refusal.
    """

    name: str
    arguments: Mapping[str, Any]
    content: Content


@dataclass
class ToolResult:
    """The outcome of one tool call.

    ``llm_content`` is what the model receives (text, or parts including images); ``display`` is
    what the user sees (markdown text or a richer object for widgets); ``file_paths`` are files the
    call read or wrote; ``error`` is set on failure, with a stable ``code``.
    """

    llm_content: Content
    display: object | None = None
    file_paths: list[str] = field(default_factory=list)
    error: ToolError | None = None
    #: Set by the budget layer when the content was already cut, so it is not cut again.
    truncated: bool = False
    #: The call as the model's history keeps it, when not as it was made (see RememberedCall).
    remembered_as: RememberedCall | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @classmethod
    def fail(cls, code: str, message: str, *, display: object | None = None,
             remembered_as: RememberedCall | None = None) -> ToolResult:
        """An error result whose model-visible text is the message itself."""
        return cls(llm_content=message, display=display if display is not None else message,
                   error=ToolError(code, message), remembered_as=remembered_as)

    @property
    def parts(self) -> list[Part]:
        """The content as a list of parts (a plain string becomes one text part)."""
        if isinstance(self.llm_content, str):
            return [TextPart(self.llm_content)]
        return list(self.llm_content)

    @property
    def text(self) -> str:
        """All text parts joined; images are left out."""
        if isinstance(self.llm_content, str):
            return self.llm_content
        return "\n".join(p.text for p in self.llm_content if isinstance(p, TextPart))


class ToolRefusal(Exception):  # noqa: N818  a refusal is the outcome, not a fault of ours
    """A call refused for the model: a stable ``code`` and a message that says what to do next.

    Raised anywhere below a tool's ``execute`` (file checks, notebook edits, URL schemes); the
    tool turns it into the error result the model reads (``result()``).
    """

    def __init__(self, code: str, message: str, *,
                 remembered_as: RememberedCall | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        #: How the model's history keeps the refused call (see ``RememberedCall``).
        self.remembered_as = remembered_as

    def __str__(self) -> str:
        return self.message

    def result(self) -> ToolResult:
        """The error result the model receives for this refusal."""
        return ToolResult.fail(self.code, self.message, remembered_as=self.remembered_as)
