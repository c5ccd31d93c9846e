"""The path argument every file tool takes: parsed, checked, and what it touches.

read_file, edit, write_file and grep must agree on what a path means (a file, or an internal
URL with a selector), or a read would not license the edit that follows it.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Protocol, TypeVar

from agent_ext.core import ParamsError, Tier, ToolContext
from agent_ext.urls import PathArg, URLError, URLRouter, parse_path_arg

S = TypeVar("S")


def session_service(ctx: ToolContext, kind: type[S]) -> S:
    """The session's ``kind`` service (ReadCache, EditHistory, URLRouter), created on first use.

    The agent creates them up front; creating them here too keeps the tools usable with a bare
    ``ToolContext`` (tests, ``call_tool`` on a fresh context).
    """
    return ctx.service_or_create(kind, kind)


def parse_target(ctx: ToolContext, text: str) -> PathArg:
    """The tool's path argument parsed; raises ParamsError with what to write instead.

    A ``scheme://`` URL is checked against the session's router here, so an unknown scheme is
    refused before any permission prompt.
    """
    refuse_control_characters(text)
    router = session_service(ctx, URLRouter)
    try:
        arg = parse_path_arg(text, ctx.cwd, schemes=router.names(), unpeeled=router.unpeeled())
        if arg.url is not None:
            router.lookup(arg.url)
    except (ValueError, URLError) as err:
        raise ParamsError(str(err)) from None
    return arg


def target_locations(ctx: ToolContext, target: PathArg) -> list[Path]:
    """What a path argument touches: its path, or the files its URL's scheme says it reaches.

    An address the scheme cannot resolve stays in the list as written (``Path`` keeps its
    scheme), which the permission layer asks about rather than matching it as a path.
    """
    if target.url is not None:
        return [Path(p) for p in session_service(ctx, URLRouter).locations(target.url)]
    return [target.path] if target.path is not None else []


def target_tier(ctx: ToolContext, target: PathArg, least: Tier) -> Tier:
    """The tier of a call on ``target``: ``least`` for a file; for a URL what its scheme asks,
    never less than ``least``; the exec tier for an address no scheme serves."""
    if target.url is None:
        return least
    try:
        return max(least, session_service(ctx, URLRouter).tier_for(target.url))
    except URLError:
        return Tier.EXEC


def parse_write_target(ctx: ToolContext, text: str) -> PathArg:
    """``parse_target`` for tools that write: a read selector (``a.py:10-20``) is refused."""
    arg = parse_target(ctx, text)
    if arg.selector is not None:
        raise ParamsError(f"`file_path` {text!r} ends in a read selector (:{arg.selector.text}), "
                          "which only read_file takes; give the plain path.")
    return arg


def refuse_control_characters(text: str, what: str = "the path") -> None:
    """Raise ParamsError when ``text`` holds a NUL or another control character.

    No file the tools work with has one in its name, and the operating system would cut a
    path at a NUL, so such a path is refused before any rule is matched or file opened.
    """
    for ch in text:
        if unicodedata.category(ch) == "Cc":
            name = "a NUL byte" if ch == "\x00" else f"the control character {ch!r}"
            raise ParamsError(f"{what} {text!r} contains {name}; give the path without it")


class ReadAsked(Protocol):
    """The session's ask rules, for searches (the services key): True when an ask rule covers
    ``path`` but not the searched ``root``, so the search leaves the file out."""

    def __call__(self, path: Path, root: Path) -> bool: ...
