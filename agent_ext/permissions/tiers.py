"""What the permission layer knows about one call: its tier, locations, commands and URL.

A tool may claim less than a call deserves, so the tier is raised where the layer knows better:
every shell command is exec, a target that reaches another machine (``ssh://``) is exec, and a
tool that declares nothing is exec. Only the agent's own bookkeeping tools are read whatever
they claim. Shell commands are analysed into simple commands, redirect targets and argument
paths, which is what command and path rules match on.
"""

from __future__ import annotations

import os
import shlex
import unicodedata
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_ext.core import Permission, Tier, ToolInvocation

from .names import SHELL_NAMES, STATE_ONLY_TOOLS, family, fold
from .paths import internal_read, lexical, real, scheme
from .rules import DYNAMIC, Rule
from .shell import SimpleCommand, analyse

#: Targets that reach another machine or start processes.
EXEC_SCHEMES = frozenset({"ssh", "sftp", "scp", "rsync", "exec", "proc", "process", "pty",
                          "shell", "docker", "kubectl", "telnet"})


def param_strings(params: Any) -> list[str]:
    """String parameter values (top level and in lists): where internal URLs are named."""
    if hasattr(params, "model_dump"):
        try:
            params = params.model_dump()
        except Exception:  # noqa: BLE001  an odd params object only hides its strings
            return []
    if not isinstance(params, Mapping):
        return [params] if isinstance(params, str) else []
    out: list[str] = []
    for value in params.values():
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list | tuple):
            out.extend(v for v in value if isinstance(v, str))
    return out


def schemes(invocation: ToolInvocation[Any]) -> set[str]:
    """Every URL scheme the call names in its parameters, locations or fetch URL."""
    texts = param_strings(invocation.params)
    texts += [str(p) for p in _safe_locations(invocation)]
    url = invocation.url()
    if url:
        texts.append(url)
    return {s for t in texts if (s := scheme(t)) is not None}


def _safe_locations(invocation: ToolInvocation[Any]) -> list[Any]:
    try:
        return list(invocation.locations())
    except Exception:  # noqa: BLE001  the decision treats an unreadable location list itself
        return []


def call_tier(invocation: ToolInvocation[Any]) -> Tier:
    """max(the invocation's own tier, what the permission layer knows about this call)."""
    tool = invocation.tool
    name = fold(tool.name)
    builtin = tool.server is None
    if invocation.command() is not None or (builtin and name in SHELL_NAMES):
        return Tier.EXEC
    if builtin and name in STATE_ONLY_TOOLS:
        return Tier.READ
    try:
        tier = Tier(invocation.tier())
    except Exception:  # noqa: BLE001  a tool that cannot say its tier gets the highest
        return Tier.EXEC
    if schemes(invocation) & EXEC_SCHEMES:
        return Tier.EXEC
    return tier


# -- shell commands -------------------------------------------------------------------------

#: Wrappers that change who runs a command: an allow rule must name them itself.
PRIVILEGE_WRAPPERS = frozenset({"sudo", "doas", "su", "runuser"})
_DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd"})
_UNKNOWN_TARGET = frozenset("$`*?[")
#: Programs whose file arguments they write, delete or move (beyond redirects).
WRITERS = frozenset({"tee", "cp", "mv", "rm", "rmdir", "touch", "truncate", "ln", "install",
                     "dd", "sed", "perl", "chmod", "chown", "mkdir", "rsync", "unlink",
                     "shred", "patch", "tar", "unzip"})


@dataclass(frozen=True)
class CommandView:
    """One simple command as rules see it."""

    command: SimpleCommand

    @property
    def privileged(self) -> bool:
        return bool(PRIVILEGE_WRAPPERS & set(self.command.wrappers))

    def symbols(self) -> list[object]:
        """The words joined by spaces, each run-time word as one ``DYNAMIC`` symbol."""
        out: list[object] = []
        for index, (word, dynamic) in enumerate(
                zip(self.command.argv, self.command.dynamic, strict=False)):
            if index:
                out.append(" ")
            out.extend([DYNAMIC] if dynamic else word)
        return out

    def allowed_by(self, rule: Rule) -> bool:
        """An allow rule covers the words (run-time words only by ``*``); under ``sudo`` and
        the like it must match the command as written, wrapper included."""
        if rule.command is None:
            return False
        if self.privileged:
            source = self.command.source.strip()
            head = source.split(maxsplit=1)[0] if source else ""
            return (head.rsplit("/", 1)[-1] in PRIVILEGE_WRAPPERS
                    and rule.command.matches(source))
        return rule.command.matches(self.symbols())

    def hit_by(self, rule: Rule) -> bool:
        """A deny or ask rule matches if the command could be what it names."""
        pattern = rule.command
        if pattern is None:
            return False
        if pattern.matches(self.symbols(), dynamic_is_wild=True):
            return True
        text = self.command.text
        wrappers = self.command.wrappers
        texts = {text, self.command.source.strip(), " ".join((*wrappers, text))}
        texts |= {f"{w} {text}" for w in wrappers}
        return any(pattern.matches(t) or pattern.matches(fold_text(t)) for t in texts)


def fold_text(text: str) -> str:
    """NFKC, so full-width and other compatibility forms read as the letters they show."""
    return unicodedata.normalize("NFKC", text)


@dataclass(frozen=True)
class ShellView:
    """A shell command line analysed for rules: its simple commands and where it writes."""

    raw: str
    complete: bool
    problems: tuple[str, ...]
    commands: tuple[CommandView, ...]
    write_paths: tuple[str, ...]
    #: A redirect target only known at run time (or relative after a ``cd``).
    dynamic_writes: bool
    #: Static argument words read as paths (resolved), for Read rules; best effort.
    argument_paths: tuple[str, ...] = ()
    #: The same for programs that write their file arguments (``rm``, ``cp``, ``tee``...).
    written_arguments: tuple[str, ...] = ()

    def hit_by(self, rule: Rule) -> bool:
        """Whether a deny or ask command rule matches any command, or the whole line."""
        if any(c.hit_by(rule) for c in self.commands):
            return True
        pattern = rule.command
        raw = self.raw.strip()
        return pattern is not None and (pattern.matches(raw) or pattern.matches(fold_text(raw)))


def shell_view(command: str, cwd: str) -> ShellView:
    """Analyse ``command`` and resolve its redirect targets against ``cwd``."""
    analysis = analyse(command)
    moves = any(c.argv and c.argv[0] in _DIRECTORY_CHANGERS for c in analysis.commands)
    paths: list[str] = []
    unknown = False
    for target in analysis.writes:
        path = _static_target(target)
        if path is None or (moves and not path.startswith(("/", "~"))):
            unknown = True
        else:
            paths.append(real(path, cwd))
    arguments: list[str] = []
    written: list[str] = []
    for simple in analysis.commands:
        words = _argument_words(simple)
        found = [real(w, cwd) for w in words] + [real(lexical(w, cwd), cwd) for w in words]
        arguments += found
        if simple.argv and not simple.dynamic[0] and _program(simple.argv[0]) in WRITERS:
            written += found
    return ShellView(command, analysis.complete, analysis.problems,
                     tuple(CommandView(c) for c in analysis.commands), tuple(paths), unknown,
                     tuple(dict.fromkeys(arguments)), tuple(dict.fromkeys(written)))


def _program(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1]


def _argument_words(simple: SimpleCommand) -> list[str]:
    """Static words after the program that could name files (``--opt=value`` gives value)."""
    out = []
    for word, dynamic in zip(simple.argv[1:], simple.dynamic[1:], strict=False):
        if dynamic or not word or "\n" in word or "\x00" in word or len(word) > 1024:
            continue
        if not word.startswith("-"):
            out.append(word)
        elif "=" in word and word.partition("=")[2]:
            out.append(word.partition("=")[2])
    return out


def _static_target(target: str) -> str | None:
    """A redirect target's path when it is fixed before the command runs, else None."""
    if _UNKNOWN_TARGET & set(target) or "<(" in target or ">(" in target:
        return None
    try:
        words = shlex.split(target)
    except ValueError:
        return None
    return words[0] if len(words) == 1 and words[0] else None


# -- one call -----------------------------------------------------------------------------------

@dataclass
class Call:
    """What the policy knows about one invocation, gathered once per decision."""

    invocation: ToolInvocation[Any]
    name: str
    server: str | None
    tier: Tier
    opinion: Permission
    #: (resolved, lexical) for each filesystem location, internal URLs resolved to theirs.
    locations: list[tuple[str, str]] = field(default_factory=list)
    command: str | None = None
    shell: ShellView | None = None
    url: str | None = None
    #: Addresses whose files could not be worked out before the call runs (never allowed).
    unresolved: list[str] = field(default_factory=list)
    #: MCP servers whose resources the call reads (``mcp://server/...``): rules naming the
    #: server apply as to a call of one of its tools.
    servers: list[str] = field(default_factory=list)
    #: The tool's own name on its MCP server (before the registry made it ``mcp__s__t``).
    remote_name: str | None = None
    #: Why a location cannot be a path at all (a NUL or other control character), or None.
    invalid: str | None = None

    @property
    def family(self) -> str:
        return family(self.name) if self.server is None else "mcp"


def describe(invocation: ToolInvocation[Any], cwd: str) -> Call:
    """Gather the facts rules and modes decide on; raises if the invocation cannot say them.

    A location is a path, or an address the tool's URL scheme could not turn into paths: an
    ``mcp://server/...`` address names the server it reads from, any other is unresolved.
    """
    tool = invocation.tool
    call = Call(invocation, tool.name, tool.server, call_tier(invocation),
                invocation.default_permission())
    remote = getattr(tool, "mcp_name", None)
    call.remote_name = remote if isinstance(remote, str) and tool.server else None
    for location in invocation.locations():
        text = os.fspath(location)
        bad = control_character(text)
        if bad is not None:
            call.invalid = (f"the path {text!r} contains {bad}, which no file name agent_ext "
                            "works with may hold")
            continue
        if internal_read(text):
            kind = text.strip().split(":", 1)[0].lower()
            if kind != "mcp":
                call.unresolved.append(_as_written(text, kind))
            elif server := mcp_server(text):
                call.servers.append(server)
            continue
        call.locations.append((real(text, cwd), lexical(text, cwd)))
    call.command = invocation.command()
    if call.command is not None:
        call.shell = shell_view(call.command, real(invocation.ctx.cwd, cwd))
    call.url = invocation.url()
    return call


def _as_written(address: str, kind: str) -> str:
    """``scheme://...`` again for an address ``Path`` spelt ``scheme:/...`` (for reasons)."""
    head, _, rest = address.partition(":")
    if rest.startswith("//") or not (rest.startswith("/") or not rest):
        return address
    return f"{kind}://{rest.lstrip('/')}" if head.lower() == kind else address


def control_character(text: str) -> str | None:
    """A description of the first control character in ``text`` (NUL, newline...), or None."""
    for ch in text:
        if unicodedata.category(ch) == "Cc":
            return "a NUL byte" if ch == "\x00" else f"the control character {ch!r}"
    return None


def mcp_server(address: str) -> str:
    """The server of ``mcp://server/...`` (also as ``mcp:/server/...``, a path's spelling)."""
    rest = address.split(":", 1)[1].lstrip("/")
    return urllib.parse.unquote(rest.split("/", 1)[0])
