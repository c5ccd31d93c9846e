"""How rules name tools and calls: aliases, families, MCP forms, and "always allow" rules.

Rules written for other agents (``Bash``, ``Read``, ``Edit``) must cover agent_ext's own tools
(``shell``, ``read_file``, ``edit``), so a rule names a set of tools rather than one name.
Names are compared after NFKC and case folding; anything that still differs does not match.
The other way round, "always allow" needs the narrowest rule that names a given call.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_ext.core import ToolInvocation
from agent_ext.core.naming import split_external

from ._global_options import GLOBAL_OPTIONS
from .paths import internal_read, real, rule_path, url_hosts
from .shell import SimpleCommand, analyse
from .shell_paths import HARMLESS, touched

_NAME_CHARS = re.compile(r"^[a-z0-9_-]+$")

SHELL_NAMES = frozenset({"bash", "shell", "run_shell_command"})
READ_FAMILY = frozenset({"read_file", "read", "grep", "glob", "ls", "grep_search",
                         "list_directory"})
EDIT_FAMILY = frozenset({"edit", "write_file", "write", "notebook_edit", "notebookedit",
                         "replace"})
#: Built-in tools that only touch the agent's own state: the read tier whatever they declare.
STATE_ONLY_TOOLS = frozenset({"tool_search", "toolsearch", "todo_write", "todowrite",
                              "ask_user", "askuser"})

_GROUPS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (SHELL_NAMES, SHELL_NAMES),
    (frozenset({"read"}), READ_FAMILY),
    (frozenset({"edit"}), EDIT_FAMILY),
    (frozenset({"write", "write_file"}), frozenset({"write", "write_file"})),
    (frozenset({"notebookedit", "notebook_edit"}), frozenset({"notebookedit", "notebook_edit"})),
    (frozenset({"webfetch", "web_fetch"}), frozenset({"webfetch", "web_fetch"})),
    (frozenset({"grep", "grep_search"}), frozenset({"grep", "grep_search"})),
    (frozenset({"ls", "list_directory"}), frozenset({"ls", "list_directory"})),
    (frozenset({"todowrite", "todo_write"}), frozenset({"todowrite", "todo_write"})),
    (frozenset({"toolsearch", "tool_search"}), frozenset({"toolsearch", "tool_search"})),
    (frozenset({"runcell", "run_cell"}), frozenset({"runcell", "run_cell"})),
    (frozenset({"askuser", "ask_user"}), frozenset({"askuser", "ask_user"})),
)
_COVERS = {name: covered for names, covered in _GROUPS for name in names}

#: Rule tools whose specifier is a path pattern, a shell command, or a web domain.
PATH_RULE_TOOLS = READ_FAMILY | EDIT_FAMILY
SHELL_RULE_TOOLS = SHELL_NAMES
FETCH_RULE_TOOLS = frozenset({"webfetch", "web_fetch"})


def fold(name: str) -> str:
    """NFKC then case folding: how rule and tool names are compared."""
    return unicodedata.normalize("NFKC", name).casefold()


def valid_rule_name(folded: str) -> bool:
    """Whether a folded rule name could ever name a tool (tool names are ASCII)."""
    if folded.startswith("mcp__") and folded.endswith("__*"):
        folded = folded[:-3]
    return bool(_NAME_CHARS.match(folded))


@dataclass(frozen=True)
class ToolSelector:
    """What a rule's tool part covers: a set of names, or every tool of an MCP server."""

    names: frozenset[str] = frozenset()
    server: str | None = None

    def covers(self, tool_name: str, server: str | None = None) -> bool:
        """Whether this selector covers a tool registered as ``tool_name`` from ``server``."""
        name = fold(tool_name)
        if name in self.names:
            return True
        if self.server is None:
            return False
        if server is not None and fold(server) == self.server:
            return True
        parts = split_external(name)
        return parts is not None and parts[0] == self.server


def selector(folded: str) -> ToolSelector:
    """The tools a folded rule name covers."""
    if folded.startswith("mcp__") and folded.endswith("__*"):
        return ToolSelector(server=folded[5:-3])
    if folded.startswith("mcp__") and split_external(folded) is None:
        return ToolSelector(server=folded[5:])
    return ToolSelector(names=_COVERS.get(folded, frozenset({folded})))


def family(tool_name: str) -> str:
    """``shell``, ``read``, ``edit``, ``fetch`` or ``other``: how rules and modes see a tool."""
    name = fold(tool_name)
    if name in SHELL_NAMES:
        return "shell"
    if name in READ_FAMILY:
        return "read"
    if name in EDIT_FAMILY:
        return "edit"
    if name in FETCH_RULE_TOOLS:
        return "fetch"
    return "other"


# -- the narrowest rule naming a call ("always allow") -----------------------------------------

#: A word that names a subcommand or script, not an argument that varies between calls.
_COMMAND_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9._:+@-]{0,63}$")
_PRIVILEGE = frozenset({"sudo", "doas", "su", "runuser"})
_PYTHON = re.compile(r"^python[0-9.]*$")
#: Subcommands whose next word names what they do (``npm run test``, ``docker compose up``);
#: None: every subcommand of that program does.
_SUBCOMMAND_GROUPS: dict[str, frozenset[str] | None] = {
    "git": frozenset({"stash", "remote", "submodule", "worktree", "notes", "bisect", "lfs",
                      "sparse-checkout", "reflog", "maintenance"}),
    "npm": frozenset({"run", "run-script", "exec"}), "pnpm": frozenset({"run", "exec"}),
    "yarn": frozenset({"run", "workspace"}), "bun": frozenset({"run", "x"}),
    "docker": frozenset({"compose", "container", "image", "volume", "network", "system",
                         "buildx", "context", "builder"}),
    "podman": frozenset({"compose", "container", "image", "volume", "network", "system"}),
    "uv": frozenset({"run", "pip", "tool", "python"}), "poetry": frozenset({"run"}),
    "go": frozenset({"mod", "tool", "work"}), "conda": frozenset({"env"}),
    "terraform": frozenset({"state", "workspace"}), "helm": frozenset({"repo"}),
    "kubectl": None, "gh": None, "aws": None,
    "gcloud": None, "az": None,
}


def escape(text: str) -> str:
    """Backslash the characters a rule specifier gives meaning to."""
    return re.sub(r"([\\()*])", r"\\\1", text)


def command_prefix(argv: tuple[str, ...], dynamic: tuple[bool, ...]) -> list[str]:
    """The words of a command up to the first argument that varies between calls.

    The program, its global options as written (``git --no-pager``), ``-m MODULE`` for
    Python, then the subcommand, and the word after it for subcommands that group others
    (``npm run test``, ``docker compose up``, ``git stash list``).
    """
    words, index, count = [argv[0]], 1, len(argv)
    base = argv[0].rsplit("/", 1)[-1]
    spec = GLOBAL_OPTIONS.get(base)
    while spec is not None and index < count and not dynamic[index] and argv[index][:1] == "-":
        word, head = argv[index], argv[index].partition("=")[0]
        if word in spec.valued:
            if index + 1 >= count or dynamic[index + 1]:
                break
            words += [word, argv[index + 1]]
            index += 2
        elif head in spec.valued or head in spec.flags or word[:2] in spec.valued:
            words.append(word)
            index += 1
        else:
            break
    if base == "cargo" and index < count and not dynamic[index] and argv[index][:1] == "+":
        words.append(argv[index])
        index += 1
    if _PYTHON.match(base) and index + 1 < count and argv[index] == "-m" and not dynamic[
            index + 1]:
        words += ["-m", argv[index + 1]]
        index += 2
    if index < count and not dynamic[index] and _COMMAND_WORD.match(argv[index]):
        sub = argv[index]
        words.append(sub)
        index += 1
        groups = _SUBCOMMAND_GROUPS.get(base, frozenset())
        if (groups is None or sub in groups) and index < count and not dynamic[index] and (
                _COMMAND_WORD.match(argv[index])):
            words.append(argv[index])
    return words


def command_rules(command: str) -> list[str]:
    """``Bash(<command words> *)`` for each simple command (never a bare ``Bash``): the
    narrowest rule that covers it and its variations (see ``command_prefix``).

    A command with no subcommand word (``ls -la``, ``make --version``) gets an exact rule:
    ``Bash(make *)`` would cover far more than was approved. So does one run through
    ``sudo`` and the like.
    """
    rules = (_command_rule(simple) for simple in analyse(command).commands)
    return list(dict.fromkeys(rule for rule in rules if rule is not None))


def _command_rule(simple: SimpleCommand) -> str | None:
    argv, dynamic = simple.argv, simple.dynamic
    if not argv or dynamic[0]:
        return None
    prefix = command_prefix(argv, dynamic)
    if _PRIVILEGE & set(simple.wrappers):
        return f"Bash({escape(simple.source.strip())})"
    if len(prefix) == 1 and not any(dynamic):
        return f"Bash({escape(' '.join(argv))})"
    return f"Bash({escape(' '.join(prefix))} *)"


def shell_rules_for(command: str, cwd: str, project: str) -> list[str]:
    """``command_rules``, plus an ``Edit`` rule for each file the command (run in ``cwd``)
    writes by name, so it runs unasked next time: writes are checked like edits."""
    found = touched(analyse(command), command, cwd)
    edits = [f"Edit({rule_path(p, project)})"
             for p in (*found.redirect_writes, *found.program_writes) if p not in HARMLESS]
    return command_rules(command) + list(dict.fromkeys(edits))


def _kind(invocation: ToolInvocation[Any]) -> str:
    tool = invocation.tool
    if invocation.command() is not None:
        return "shell"
    if tool.server is not None or split_external(tool.name) is not None:
        return "mcp"
    return family(tool.name)


def _paths(invocation: ToolInvocation[Any], cwd: str) -> list[str]:
    return [real(p, cwd) for p in invocation.locations() if not internal_read(os.fspath(p))]


def scopes_for(invocation: ToolInvocation[Any]) -> tuple[str, ...]:
    """What "always allow" may cover for this call, narrowest first."""
    kind = _kind(invocation)
    if kind == "shell":
        # The rules themselves, so the approval widget shows exactly what would be saved.
        here = os.fspath(invocation.ctx.cwd)
        rules = shell_rules_for(invocation.command() or "", here, here)
        return (", ".join(rules),) if rules else ("command prefix",)
    if kind == "mcp":
        return ("tool", "server")
    if kind in ("edit", "read") and invocation.locations():
        searches = kind == "read" and fold(invocation.tool.name) not in ("read_file", "read")
        return ("directory", "tool") if searches else ("file", "directory", "tool")
    if kind == "fetch" and invocation.url():
        return ("domain", "tool")
    return ("tool",)


def _path_rule(word: str, path: str, cwd: str, *, directory: bool) -> str:
    if not directory:
        return f"{word}({rule_path(path, cwd)})"
    folder = path if Path(path).is_dir() else posixpath.dirname(path)
    return f"{word}({rule_path(folder, cwd, directory=True)})"


def suggest_rules(invocation: ToolInvocation[Any], scope: str | None, cwd: str) -> list[str]:
    """The allow rules "always allow" adds for ``scope`` (None: the narrowest)."""
    tool = invocation.tool
    kind = _kind(invocation)
    command = invocation.command()
    if command is not None:
        return shell_rules_for(command, real(invocation.ctx.cwd, cwd), cwd)
    if kind == "mcp":
        parts = split_external(tool.name)
        server = tool.server or (parts[0] if parts else None)
        return [f"mcp__{server}"] if scope == "server" and server else [tool.name]
    if kind in ("edit", "read"):
        word = "Edit" if kind == "edit" else "Read"
        paths = _paths(invocation, cwd)
        if scope == "tool" or not paths:
            return [word]
        directory = (scope or scopes_for(invocation)[0]) == "directory"
        return list(dict.fromkeys(_path_rule(word, path, cwd, directory=directory)
                                  for path in paths))
    if kind == "fetch" and scope != "tool":
        hosts = sorted(h for h in url_hosts(invocation.url() or "") if h)
        if len(hosts) == 1:
            return [f"WebFetch(domain:{hosts[0]})"]
    return [tool.name]
