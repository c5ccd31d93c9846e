"""What a git command reads, writes and runs, for the permission rules.

Most git subcommands write the repository (`.git/`), many also the work tree (`checkout`,
`reset`, `clean`, `stash`), `git config` writes a config file that can make git run commands
later, and some options run a command outright (`-c core.pager=...`, `rebase --exec`). Only
subcommands known to be read-only are treated as reads; an unknown one (an alias, say) writes
the work tree and the repository.
"""

from __future__ import annotations

from ._effects import Arg, Effects
from ._global_options import GLOBAL_OPTIONS

READ_ONLY = frozenset({
    "status", "log", "show", "diff", "blame", "annotate", "grep", "ls-files", "ls-tree",
    "rev-parse", "describe", "shortlog", "cat-file", "rev-list", "for-each-ref", "show-ref",
    "name-rev", "merge-base", "var", "version", "help", "whatchanged", "cherry",
    "count-objects", "check-ignore", "check-attr", "check-mailmap", "diff-tree", "diff-files",
    "diff-index", "ls-remote", "show-branch", "range-diff", "verify-commit", "verify-tag",
    "fsck", "get-tar-commit-id", "check-ref-format",
})
#: Subcommands that are read-only in their listing forms.
_LISTING = {
    "branch": frozenset({"-a", "-r", "-l", "--list", "-v", "-vv", "--show-current",
                         "--all", "--remotes", "--verbose", "--no-color", "--color"}),
    "tag": frozenset({"-l", "--list", "-n", "--sort", "--contains", "--no-contains",
                      "--points-at", "--merged", "--no-merged", "--format", "-v", "--verify"}),
    "remote": frozenset({"-v", "--verbose", "show", "get-url"}),
    "stash": frozenset({"list", "show"}),
    "worktree": frozenset({"list"}),
    "notes": frozenset({"list", "show"}),
    "reflog": frozenset({"show"}),
    "submodule": frozenset({"status", "summary"}),
    "sparse-checkout": frozenset({"list"}),
    "config": frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list",
                         "--get-urlmatch", "--get-color", "--get-colorbool"}),
}
WORK_TREE_WRITERS = frozenset({
    "checkout", "switch", "restore", "reset", "clean", "stash", "merge", "rebase", "pull",
    "cherry-pick", "revert", "am", "apply", "mv", "rm", "checkout-index", "read-tree",
    "worktree", "sparse-checkout", "submodule", "bisect", "init", "clone", "format-patch",
    "archive", "bundle",
})
#: Options that make a git subcommand run a command given on the command line.
CODE_OPTIONS: dict[str, frozenset[str]] = {
    "fetch": frozenset({"--upload-pack"}), "pull": frozenset({"--upload-pack"}),
    "ls-remote": frozenset({"--upload-pack"}), "clone": frozenset({"--upload-pack", "-u"}),
    "push": frozenset({"--receive-pack", "--exec"}), "archive": frozenset({"--exec"}),
    "rebase": frozenset({"-x", "--exec"}), "difftool": frozenset({"-x", "--extcmd"}),
    "grep": frozenset({"-O", "--open-files-in-pager"}),
    "filter-branch": frozenset({"--tree-filter", "--index-filter", "--msg-filter",
                                "--env-filter", "--commit-filter", "--parent-filter",
                                "--tag-name-filter", "--setup"}),
}
_CODE_SUBCOMMANDS = {("submodule", "foreach"), ("bisect", "run")}
#: ``-c`` keys that only change how git looks or who it says you are.
HARMLESS_CONFIG = ("color.", "user.", "advice.", "core.quotepath", "log.", "init.defaultbranch",
                   "column.", "i18n.", "format.pretty", "diff.renames", "pull.rebase",
                   "merge.conflictstyle", "core.abbrev")


def config_runs_code(assignment: str) -> bool:
    """Whether ``git -c KEY=VALUE`` could make git run a command (pager, ssh, alias...)."""
    key = assignment.partition("=")[0].strip().lower()
    return not key.startswith(HARMLESS_CONFIG)


def git_effects(args: list[Arg], out: Effects) -> None:
    """Fill ``out`` for ``git ARGS``."""
    spec = GLOBAL_OPTIONS["git"]
    repository: Arg | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        text = arg.text
        if arg.dynamic:
            out.runs.append("git options only known at run time")
            out.repositories.append(None)
            out.recursive_writes.append(Arg("."))
            return
        if not text.startswith("-"):
            break
        head, eq, value = text.partition("=")
        if head in spec.valued or (text[:2] in ("-C", "-c") and len(text) > 2):
            if eq or (len(text) > 2 and head not in spec.valued):
                given = Arg(value) if eq else arg.after(2)
                index += 1
            elif index + 1 < len(args):
                given = args[index + 1]
                index += 2
            else:
                return
            if head.startswith("-C"):
                repository = given
            elif head.startswith("-c"):
                if given.dynamic or config_runs_code(given.text):
                    out.runs.append(f"git -c {given.text.partition('=')[0]} can make git run "
                                    "a command")
            elif head in ("--git-dir", "--work-tree"):
                out.repositories.append(given)
            else:
                out.runs.append(f"git {head} can make git run a command")
            continue
        if head == "--exec-path" and eq:
            out.runs.append("git --exec-path runs git commands from another folder")
        elif head not in spec.flags:
            out.runs.append(f"git option {head} is not known")
        index += 1
    rest = args[index + 1:]
    if index >= len(args):
        return
    sub = args[index].text
    _subcommand(sub, rest, repository, out)


def _subcommand(sub: str, rest: list[Arg], repository: Arg | None, out: Effects) -> None:
    words = {a.text for a in rest if not a.dynamic}
    names = {w.partition("=")[0] for w in words}
    code = names & CODE_OPTIONS.get(sub, frozenset())
    code |= {n for n in names if n.startswith("-x") and sub == "rebase"}
    if code:
        out.runs.append(f"git {sub} {sorted(code)[0]} runs a command")
    first = rest[0].text if rest and not rest[0].dynamic else ""
    if (sub, first) in _CODE_SUBCOMMANDS:
        out.runs.append(f"git {sub} {first} runs a command")
    out.writes.extend(_output_files(rest))
    root = repository or Arg(".")
    # `git show REV:PATH` prints a file from the object store.
    if sub in _OBJECT_READERS:
        out.reads += [Arg(a.text.partition(":")[2]) for a in rest
                      if not a.dynamic and ":" in a.text and not a.text.startswith(("-", ":"))
                      and "://" not in a.text and a.text.partition(":")[2]]
    if sub == "archive":
        out.recursive_reads.append(root)
    if "-c" in words and any("=" in a.text for a in rest):
        out.runs.append(f"git {sub} -c with a setting may configure git to run a command")
    if sub == "config":
        if not (words & _LISTING["config"]):
            out.writes.append(_config_file(rest, root))
            keys = [a.text for a in rest if a.dynamic or not a.text.startswith("-")][:1]
            if not keys or keys[0].startswith("$") or config_runs_code(keys[0] + "="):
                out.runs.append(f"git config {keys[0] if keys else ''} can make git run a "
                                "command later".replace("  ", " "))
        return
    if sub in READ_ONLY:
        if sub == "grep":
            out.recursive_reads.append(root)
        return
    listing = _LISTING.get(sub)
    operands = [a for a in rest if a.dynamic or not a.text.startswith("-")]
    if listing is not None and (not rest or (words and all(
            w in listing or (w.startswith("-") and w.partition("=")[0] in listing)
            for w in words) and not any(a.dynamic for a in rest))):
        return
    if listing is not None and sub in ("branch", "tag") and not operands and words <= (
            listing | {"--no-column"}):
        return
    out.repositories.append(repository)
    if (sub in WORK_TREE_WRITERS and writes_work_tree(sub, words, operands)) or (
            sub not in WORK_TREE_WRITERS and sub not in _KNOWN_REPOSITORY_ONLY):
        out.recursive_writes.append(root)
    if sub == "worktree" and first == "add" and len(operands) > 1:
        out.recursive_writes.append(operands[1])
    if sub == "clone":
        if len(operands) > 1:
            out.recursive_writes.append(operands[1])
        else:
            out.writes_into.append(repository)


_KNOWN_REPOSITORY_ONLY = frozenset({
    "commit", "add", "fetch", "push", "tag", "branch", "notes", "gc", "prune", "repack",
    "update-ref", "update-index", "remote", "reflog", "replace", "symbolic-ref", "pack-refs",
    "maintenance", "lfs", "fast-import", "hash-object", "mktree", "write-tree", "commit-tree",
    "update-server-info", "prune-packed", "verify-pack", "index-pack", "unpack-objects",
    "gui", "citool", "send-email", "request-pull", "credential", "rerere", "config",
})


_OBJECT_READERS = frozenset({"show", "cat-file", "diff", "log", "archive", "grep", "blame"})


def writes_work_tree(sub: str, words: set[str], operands: list[Arg]) -> bool:
    """Whether a work-tree subcommand changes files in this form (``checkout -b NEW`` and
    ``reset`` without ``--hard`` only move refs and the index)."""
    if sub in ("checkout", "switch") and words & {"-b", "-B", "-c", "-C", "--orphan"}:
        return len(operands) > 1
    if sub == "reset":
        return bool(words & {"--hard", "--merge", "--keep"})
    if sub == "restore":
        return not (words & {"--staged", "-S"}) or bool(words & {"--worktree", "-W"})
    if sub == "apply":
        return not (words & {"--cached", "--check", "--stat", "--numstat", "--summary"})
    if sub == "rm":
        return "--cached" not in words
    return sub != "init"


def _output_files(rest: list[Arg]) -> list[Arg]:
    """``--output=FILE`` / ``--output FILE`` / ``-o FILE`` (log, diff, format-patch, archive)."""
    found = []
    for position, arg in enumerate(rest):
        if arg.dynamic:
            continue
        if arg.text.startswith("--output="):
            found.append(arg.after(len("--output=")))
        elif arg.text in ("--output", "-o", "--output-directory") and position + 1 < len(rest):
            found.append(rest[position + 1])
        elif arg.text.startswith("--output-directory="):
            found.append(arg.after(len("--output-directory=")))
    return found


def _config_file(rest: list[Arg], root: Arg) -> Arg:
    words = [a.text for a in rest]
    if "--global" in words:
        return Arg("~/.gitconfig")
    if "--system" in words:
        return Arg("/etc/gitconfig")
    for position, word in enumerate(words):
        if word in ("-f", "--file") and position + 1 < len(rest):
            return rest[position + 1]
        if word.startswith("--file="):
            return Arg(word.partition("=")[2])
    base = root.text.rstrip("/") or "/"
    return Arg(f"{base}/.git/config", root.dynamic)
