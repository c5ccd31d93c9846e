"""What the permission layer knows about one call: its tier, locations, commands and URL.

A tool may claim less than a call deserves, so the tier is raised where the layer knows better:
every shell command is exec, a target that reaches another machine (``ssh://``) is exec, and a
tool that declares nothing is exec. Only the agent's own bookkeeping tools are read whatever
they claim. Shell commands are analysed into simple commands, redirect targets and argument
paths, which is what command and path rules match on.
"""

from __future__ import annotations

import os
import unicodedata
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_ext.core import Permission, Tier, ToolInvocation

from ._shell_options import option_hit, strip_globals
from .names import SHELL_NAMES, STATE_ONLY_TOOLS, family, fold
from .paths import internal_read, lexical, real, scheme
from .programs import COMMAND_RUNNERS
from .rules import DYNAMIC, Rule
from .shell import SimpleCommand, analyse
from .shell_paths import Touched, touched

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
        for index, word in enumerate(self.words()):
            if index:
                out.append(" ")
            out.extend([DYNAMIC] if word is DYNAMIC else str(word))
        return out

    def words(self) -> list[object]:
        """The words, each run-time word as ``DYNAMIC``."""
        return [DYNAMIC if dynamic else word for word, dynamic in
                zip(self.command.argv, self.command.dynamic, strict=False)]

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
        """A deny or ask rule matches if the command could be what it names: also with global
        options removed, options compared as sets, and inside commands that run others."""
        pattern = rule.command
        if pattern is None:
            return False
        if pattern.matches(self.symbols(), dynamic_is_wild=True):
            return True
        text = self.command.text
        wrappers = self.command.wrappers
        texts = {text, self.command.source.strip(), " ".join((*wrappers, text))}
        texts |= {f"{w} {text}" for w in wrappers}
        if any(pattern.matches(t) or pattern.matches(fold_text(t)) for t in texts):
            return True
        return any(pattern.matches(_joined(v), dynamic_is_wild=True) or option_hit(rule, v)
                   for v in self.variants())

    def variants(self) -> list[list[object]]:
        """The command as deny rules also see it: the program by its name (``/bin/rm`` is
        ``rm``), without global options, and each command a runner (``flock``, ``chroot``...)
        could start, from any of its words on."""
        words = [fold_text(w) if isinstance(w, str) else w for w in self.words()]
        if words and isinstance(words[0], str) and "/" in words[0].rstrip("/"):
            words[0] = words[0].rstrip("/").rsplit("/", 1)[-1]
        out = [strip_globals(words)]
        if words and isinstance(words[0], str) and words[0].rsplit("/", 1)[-1] in (
                COMMAND_RUNNERS | {"ssh"}):
            out += [strip_globals(words[i:]) for i in range(1, len(words))]
        return out


def _joined(words: list[object]) -> list[object]:
    out: list[object] = []
    for index, word in enumerate(words):
        if index:
            out.append(" ")
        out.extend([DYNAMIC] if word is DYNAMIC else str(word))
    return out


def fold_text(text: str) -> str:
    """NFKC, so full-width and other compatibility forms read as the letters they show."""
    return unicodedata.normalize("NFKC", text)


@dataclass(frozen=True)
class ShellView:
    """A shell command line analysed for rules: its simple commands and what it touches.

    Paths are absolute and resolved. Other parts of the policy rely on: ``write_paths`` and
    ``written_arguments`` (every known write), ``dynamic_writes`` (some write only known at
    run time), ``repo_writes`` (``.git`` folders git writes), ``network`` and ``touched``.
    """

    raw: str
    complete: bool
    problems: tuple[str, ...]
    commands: tuple[CommandView, ...]
    #: Output redirection targets.
    write_paths: tuple[str, ...]
    #: Some write (redirection or program argument) is only known at run time.
    dynamic_writes: bool
    #: Static argument words read as paths (resolved), for Read rules; best effort.
    argument_paths: tuple[str, ...] = ()
    #: Files and folders programs write (``rm``, ``cp`` destinations, ``tee``, ``sort -o``...).
    written_arguments: tuple[str, ...] = ()
    #: Everything resolved: reads, writes, recursive folders, unknowns, network, hidden code.
    touched: Touched = field(default_factory=Touched)

    @property
    def read_paths(self) -> tuple[str, ...]:
        return self.touched.reads

    @property
    def repo_writes(self) -> tuple[str, ...]:
        return self.touched.repositories

    @property
    def network(self) -> bool:
        return bool(self.touched.network)

    @property
    def unknown(self) -> bool:
        """Some path the command reads or writes is only known when it runs."""
        return bool(self.touched.unknown_reads or self.touched.unknown_writes)

    def hit_by(self, rule: Rule) -> bool:
        """Whether a deny or ask command rule matches any command, or the whole line."""
        if any(c.hit_by(rule) for c in self.commands):
            return True
        pattern = rule.command
        raw = self.raw.strip()
        return pattern is not None and (pattern.matches(raw) or pattern.matches(fold_text(raw)))


def shell_view(command: str, cwd: str) -> ShellView:
    """Analyse ``command`` and resolve what it reads and writes against ``cwd``."""
    analysis = analyse(command)
    found = touched(analysis, command, cwd)
    arguments: list[str] = []
    for simple in analysis.commands:
        words = _argument_words(simple)
        if simple.wrappers:
            # Wrapper options can name files too (`xargs -a FILE`): their words, unquoted.
            words += [w.strip("'\"") for w in simple.source.split()
                      if not w.startswith("-") and "$" not in w and "`" not in w]
            words += [w.partition("=")[2].strip("'\"") for w in simple.source.split()
                      if "=" in w and "$" not in w]
        arguments += [real(w, cwd) for w in words] + [real(lexical(w, cwd), cwd) for w in words]
    written = (*found.program_writes, *found.recursive_writes)
    return ShellView(command, analysis.complete, analysis.problems,
                     tuple(CommandView(c) for c in analysis.commands), found.redirect_writes,
                     bool(found.unknown_writes), tuple(dict.fromkeys(arguments)),
                     tuple(dict.fromkeys(written)), found)


def _argument_words(simple: SimpleCommand) -> list[str]:
    """Static words after the program that could name files (``--opt=value`` and
    ``key=value`` give value)."""
    out = []
    for word, dynamic in zip(simple.argv[1:], simple.dynamic[1:], strict=False):
        if dynamic or not word or "\n" in word or "\x00" in word or len(word) > 1024:
            continue
        if not word.startswith("-"):
            out.append(word)
        if "=" in word and word.partition("=")[2]:
            out.append(word.partition("=")[2])
    return out


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
