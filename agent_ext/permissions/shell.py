"""Shell command analysis: the simple commands a command line would run, found by a real parser.

Permission rules judge programs, not strings: `Bash(git push:*)` has to see the `git push` in
`sudo -u root g'i't push`, in `bash -c 'git push'` and in `$(git push)`. The command line is
parsed with tree-sitter-bash, quotes are resolved the way bash resolves them, wrappers and inline
scripts are looked through, and whatever cannot be known before run time (eval, a command name
held in a variable, a parse error) makes the analysis incomplete, so the policy asks instead of
allowing.
"""

from __future__ import annotations

import posixpath
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from ._shell_words import (
    Word,
    decode_ansi_c,
    has_brace_expansion,
    quote_closes_early,
    strip_tabs,
    unescape_double_quoted,
    unescape_heredoc,
    unescape_unquoted,
)
from ._shell_wrappers import WRAPPERS, unwrap

__all__ = ["ShellAnalysis", "SimpleCommand", "analyse"]


@dataclass(frozen=True)
class SimpleCommand:
    """One program invocation a command line may run, with its words as bash would pass them.

    `argv` holds quote-resolved words; a word containing an expansion keeps its source text and
    is marked in `dynamic`. `text` is the words joined by spaces, the string rules match against.
    `wrappers` lists what was looked through to reach it (`sudo`, `env`, `bash` for `bash -c`).
    """

    argv: tuple[str, ...]
    dynamic: tuple[bool, ...]
    text: str
    source: str
    wrappers: tuple[str, ...] = ()
    #: Per word: whether it holds an unquoted glob character bash would expand.
    globbed: tuple[bool, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class ShellAnalysis:
    """Every simple command a command line may run, and whether that list is known to be whole.

    `commands` are in source order, an outer command before the commands nested in it.
    `complete` is False when anything could not be analysed; `problems` says what. `writes`
    holds the source text of every redirection target written to, `reads` of every one read
    from (`< file`, `<> file`, `$(<file)`).
    """

    commands: tuple[SimpleCommand, ...]
    complete: bool
    problems: tuple[str, ...]
    writes: tuple[str, ...]
    reads: tuple[str, ...] = ()


_LANGUAGE: Language | None = None
_LANGUAGE_LOCK = threading.Lock()
_LOCAL = threading.local()


def _parser() -> Parser:
    """This thread's parser; why: parsers are not thread-safe, the language is built once."""
    parser = getattr(_LOCAL, "parser", None)
    if isinstance(parser, Parser):
        return parser
    global _LANGUAGE  # noqa: PLW0603 - built once, lazily, under the lock
    with _LANGUAGE_LOCK:
        if _LANGUAGE is None:
            _LANGUAGE = Language(tree_sitter_bash.language())
        language = _LANGUAGE
    parser = Parser(language)
    _LOCAL.parser = parser
    return parser


_ASTRAL = re.compile(rb"[\xf0-\xf7][\x80-\xbf]{3}")


def mask_astral(src: bytes) -> bytes:
    """Replace each 4-byte UTF-8 character by four ASCII letters, keeping every byte offset.

    Why: tree-sitter-bash 0.25 can crash the process (SIGSEGV) on `{` followed by a
    character outside the Basic Multilingual Plane (tree-sitter-bash issue 337). Letters keep
    such a character's role as part of a word; texts are still read from the original bytes.
    """
    return _ASTRAL.sub(b"aaaa", src)


_MAX_NODE_DEPTH = 120
_MAX_SCRIPT_DEPTH = 8
_MAX_SNIPPET = 40

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash"})
_FOREIGN_SHELLS = frozenset({"fish", "csh", "tcsh", "nu", "elvish", "xonsh"})
_SHELL_VALUED = frozenset({"o", "O"})
_SHELL_LONG_VALUED = frozenset({"--rcfile", "--init-file"})
# Builtins that run text they are handed as code, or change what a later name runs.
_CODE_RUNNERS = {
    "eval": "uses eval",
    "source": "sources a file",
    ".": "sources a file",
    "fc": "re-runs commands from history",
    "coproc": "uses coproc",
}
# Builtins that treat a `name[subscript]` argument arithmetically, running `$(...)` inside it.
_NAME_TAKING = frozenset({
    "printf", "read", "unset", "declare", "typeset", "local", "export", "readonly", "let",
    "test", "[", "mapfile", "readarray", "getopts", "wait",
})
_ARITH_TEST_OPERATORS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_EXPANSION_TYPES = frozenset({
    "simple_expansion", "expansion", "command_substitution", "process_substitution",
    "arithmetic_expansion", "brace_expression",
})
_STATEMENT_CONTAINERS = frozenset({
    "program", "list", "pipeline", "subshell", "do_group", "if_statement", "elif_clause",
    "else_clause", "while_statement", "negated_command", "case_item",
})
_WORD_TYPES = frozenset({
    "word", "number", "string", "raw_string", "ansi_c_string", "translated_string",
    "concatenation", "extglob_pattern", "array", *_EXPANSION_TYPES,
})
_WRITE_OPERATORS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
_READ_OPERATORS = frozenset({"<", "<>"})
_INTEGER = re.compile(r"[+-]?[0-9]+")
_FD_WORD = re.compile(r"[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\}")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RISKY_ENV_EXACT = frozenset({
    "PATH", "BASH_ENV", "ENV", "PS4", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "PAGER",
    "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS",
    "SUDO_ASKPASS", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH",
    "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS", "RUSTC_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER", "GIT_SSH", "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_ASKPASS",
    "GIT_EXEC_PATH", "GIT_PROXY_COMMAND", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_WORK_TREE",
})
_RISKY_ENV_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG", "npm_config_", "NPM_CONFIG_")


def _risky_env(name: str) -> bool:
    return name in _RISKY_ENV_EXACT or name.startswith(_RISKY_ENV_PREFIXES)


def _decode(raw: bytes) -> str:
    """Bytes back to text; the input came from a str, but a node may split a character."""
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace")


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_SNIPPET else flat[:_MAX_SNIPPET - 1] + "…"


def _static(text: str) -> Word:
    return Word(text, text, shape="x" * len(text))


@dataclass
class _Frame:
    """Per-script state: the source being walked and what the script is nested in."""

    src: bytes
    wrappers: tuple[str, ...]
    where: str


@dataclass
class _Walker:
    """Walks tree-sitter nodes and collects commands, problems and writes."""

    commands: list[SimpleCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    tainted: set[str] = field(default_factory=set)
    arith_refs: set[str] = field(default_factory=set)
    frames: list[_Frame] = field(default_factory=list)
    consumed: set[tuple[int, int, int]] = field(default_factory=set)

    # -- bookkeeping -------------------------------------------------------------------------

    def problem(self, message: str) -> None:
        where = self.frames[-1].where if self.frames else ""
        text = f"{message} (in {where})" if where else message
        if text not in self.problems:
            self.problems.append(text)

    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def text(self, node: Node) -> str:
        """A node's text, read from the script as written (the parser saw a masked copy)."""
        return _decode(self.frame.src[node.start_byte:node.end_byte])

    # -- scripts -----------------------------------------------------------------------------

    def script(self, text: str, wrappers: tuple[str, ...], where: str) -> None:
        """Parse and walk `text` as a shell script nested in `wrappers`."""
        if len(self.frames) > _MAX_SCRIPT_DEPTH:
            self.problem("scripts nested too deeply to analyse")
            return
        src = text.encode("utf-8", "surrogatepass")
        masked = mask_astral(src)
        tree = _parser().parse(masked)
        glued = _glued_lines(masked, tree.root_node)
        if glued:
            # The parser joined a line starting with a backslash onto the line before; a
            # semicolon separates the two commands exactly as that newline does for bash.
            patched, patched_mask = bytearray(src), bytearray(masked)
            for offset in glued:
                patched[offset] = patched_mask[offset] = ord(";")
            src, masked = bytes(patched), bytes(patched_mask)
            tree = _parser().parse(masked)
        self.frames.append(_Frame(src, wrappers, where))
        try:
            root = tree.root_node
            if root.has_error:
                self.problem(f"parse error near {_snippet(self._error_text(root))!r}")
            else:
                skipped = _uncovered(src, root)
                if skipped is not None:
                    self.problem(f"cannot tell how bash reads {_snippet(skipped)!r}")
            self.walk(root, 0)
        finally:
            self.frames.pop()

    def _error_text(self, root: Node) -> str:
        stack = [root]
        while stack:
            node = stack.pop()
            if node.is_error or node.is_missing:
                start = node.start_byte
                return _decode(self.frame.src[start:start + _MAX_SNIPPET])
            if node.has_error:
                stack.extend(reversed(node.children))
        return self.text(root)

    # -- statements --------------------------------------------------------------------------

    def walk(self, node: Node, depth: int) -> None:
        """Walk one statement-level node."""
        if depth > _MAX_NODE_DEPTH:
            self.problem("nested too deeply to analyse")
            return
        kind = node.type
        if node.is_error or node.is_missing:
            self.walk_children(node, depth)
            return
        if kind == "comment" or not node.is_named:
            return
        if kind == "command":
            self.command(node, depth, [])
        elif kind == "redirected_statement":
            self.redirected(node, depth)
        elif kind in _STATEMENT_CONTAINERS:
            self.walk_children(node, depth)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node, depth)
        elif kind == "variable_assignment":
            self.assignment(node, depth)
        elif kind == "variable_assignments":
            self.walk_children(node, depth)
        elif kind == "function_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                self.walk(body, depth + 1)
        elif kind == "compound_statement":
            first = node.children[0] if node.children else None
            if first is not None and first.type == "((":
                self.arithmetic(node, depth)
            else:
                self.walk_children(node, depth)
        elif kind == "test_command":
            self.find_substitutions(node, depth, test=True)
        elif kind == "c_style_for_statement":
            self.arithmetic(node, depth)
            body = node.child_by_field_name("body")
            if body is not None:
                self.walk(body, depth + 1)
        elif kind == "for_statement":
            self.for_statement(node, depth)
        elif kind == "case_statement":
            self.walk_children(node, depth)
        elif kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            self.redirect(node, depth)
        elif kind in _WORD_TYPES:
            self.resolve(node, depth)
        else:
            self.problem(f"unsupported shell syntax: {kind}")
            self.find_substitutions(node, depth)

    def walk_children(self, node: Node, depth: int) -> None:
        for child in node.children:
            self.walk(child, depth + 1)

    def for_statement(self, node: Node, depth: int) -> None:
        variable = node.child_by_field_name("variable")
        values = node.children_by_field_name("value")
        words = [self.resolve(value, depth + 1) for value in values]
        if variable is not None and not all(
                not w.dynamic and _INTEGER.fullmatch(w.text) for w in words):
            self.tainted.add(self.text(variable))
        body = node.child_by_field_name("body")
        if body is not None:
            self.walk(body, depth + 1)

    def redirected(self, node: Node, depth: int) -> None:
        body = node.child_by_field_name("body")
        redirects = node.children_by_field_name("redirect")
        if body is not None:
            if body.type == "command":
                self.command(body, depth + 1, redirects)
            else:
                self.walk(body, depth + 1)
        for redirect in redirects:
            self.redirect(redirect, depth + 1)
        for child in node.children:
            if child.is_error or child.is_missing:
                self.walk(child, depth + 1)

    def redirect(self, node: Node, depth: int) -> None:
        """Record written targets and walk whatever the redirection runs or continues with."""
        if node.type == "file_redirect":
            operator = next((c.type for c in node.children if not c.is_named), "")
            destinations = node.children_by_field_name("destination")
            for dest in destinations:
                if self.node_key(dest) not in self.consumed:
                    self.resolve(dest, depth + 1)
            if destinations:
                target = self.text(destinations[0])
                if operator in _WRITE_OPERATORS or (
                        operator == ">&" and not _INTEGER.fullmatch(target) and target != "-"):
                    self.writes.append(target)
                if operator in _READ_OPERATORS or (
                        operator == "<&" and not _INTEGER.fullmatch(target) and target != "-"):
                    self.reads.append(target)
            for child in node.children:
                if child.is_error or child.is_missing:
                    self.walk(child, depth + 1)
            return
        if node.type == "herestring_redirect":
            for child in node.named_children:
                self.resolve(child, depth + 1)
            return
        quoted = self.heredoc_quoted(node)
        body_start = self.heredoc_body_start(node)
        for child in node.children:
            if child.type in ("heredoc_start", "heredoc_end") or not child.is_named:
                continue
            if child.type != "heredoc_body" and child.end_byte >= body_start:
                self.problem("cannot tell where the here-document body starts")
            if self.node_key(child) in self.consumed:
                continue
            if child.type == "heredoc_body":
                if not quoted:
                    self.find_substitutions(child, depth + 1)
                continue
            self.walk(child, depth + 1)

    def node_key(self, node: Node) -> tuple[int, int, int]:
        return (len(self.frames), node.start_byte, node.end_byte)

    def stray_arguments(self, redirects: list[Node]) -> list[Node]:
        """Command words the parser filed under a redirection that precedes them.

        Why: bash reads `rm >log -rf /` and `rm <<EOF -rf /` as `rm -rf /`, while the parse
        tree shows `-rf /` as extra targets of `>log` or as part of the here-document.
        """
        found: list[Node] = []
        for redirect in redirects:
            if redirect.type == "file_redirect":
                found.extend(redirect.children_by_field_name("destination")[1:])
            elif redirect.type == "heredoc_redirect":
                body_start = self.heredoc_body_start(redirect)
                found.extend(
                    child for index, child in enumerate(redirect.children)
                    if redirect.field_name_for_child(index) == "argument"
                    and child.end_byte < body_start)
        self.consumed.update(self.node_key(node) for node in found)
        return found

    def heredoc_body_start(self, node: Node) -> int:
        """Where the body begins: after the newline ending the line of the `<<` operator."""
        newline = self.frame.src.find(b"\n", node.start_byte)
        return newline + 1 if newline >= 0 else len(self.frame.src)

    def heredoc_quoted(self, node: Node) -> bool:
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        return start is not None and any(q in self.text(start) for q in "'\"\\")

    def stdin_of(self, redirects: Iterable[Node]) -> str | None:
        """The static text fed to stdin by the last here-doc or here-string, if any."""
        text: str | None = None
        for redirect in redirects:
            descriptor = redirect.child_by_field_name("descriptor")
            if descriptor is None:
                descriptor = next(
                    (c for c in redirect.children if c.type == "file_descriptor"), None)
            if descriptor is not None and self.text(descriptor) != "0":
                continue
            if redirect.type == "heredoc_redirect":
                text = self.heredoc_text(redirect)
            elif redirect.type == "herestring_redirect":
                words = [self.word_of(c) for c in redirect.named_children]
                text = None if not words or any(w.dynamic for w in words) else (
                    " ".join(w.text for w in words) + "\n")
            elif redirect.type == "file_redirect":
                operator = next((c.type for c in redirect.children if not c.is_named), "")
                if operator.startswith("<"):
                    text = None
        return text

    def heredoc_text(self, node: Node) -> str | None:
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        if body is None:
            return ""
        raw = self.text(body)
        if not self.heredoc_quoted(node):
            if any(c.type != "heredoc_content" for c in body.named_children):
                return None
            raw = unescape_heredoc(raw)
        if any(c.type == "<<-" for c in node.children):
            raw = strip_tabs(raw)
        return raw

    # -- assignments and declarations --------------------------------------------------------

    def assignment(self, node: Node, depth: int) -> Word:
        """Walk `NAME=VALUE`; returns it as the word a declaration builtin receives."""
        name_node = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        name = ""
        if name_node is not None:
            if name_node.type == "subscript":
                self.arithmetic(name_node, depth + 1)
                inner = name_node.child_by_field_name("name")
                name = self.text(inner) if inner is not None else ""
            else:
                name = self.text(name_node)
        if _risky_env(name):
            self.problem(f"sets {name}, which can make commands run other code")
        operator = next((c.type for c in node.children if not c.is_named), "=")
        prefix = (self.text(name_node) if name_node is not None else "") + operator
        if value is None:
            return _static(prefix)
        word = self.resolve(value, depth + 1)
        if word.dynamic or not _INTEGER.fullmatch(word.text):
            self.tainted.add(name)
        source = self.text(node)
        if word.dynamic:
            return Word(source, source, dynamic=True)
        return Word(prefix + word.text, source, shape="x" * len(prefix) + word.shape)

    def declaration(self, node: Node, depth: int) -> None:
        """`export`, `declare`, `local`, `readonly`, `typeset`, `unset`: a command of its own."""
        nested_start = len(self.commands)
        words: list[Word] = []
        for child in node.children:
            if not child.is_named:
                if child.type not in ("\n",):
                    words.append(_static(child.type))
                continue
            if child.type == "variable_assignment":
                words.append(self.assignment(child, depth + 1))
            elif child.type == "variable_name":
                words.append(_static(self.text(child)))
            elif child.type in _WORD_TYPES:
                words.append(self.resolve(child, depth + 1))
            elif child.type == "comment":
                continue
            else:
                self.walk(child, depth + 1)
        integer = any(w.text.startswith("-") and "i" in w.text for w in words[1:])
        if integer and any("=" in w.text and (w.dynamic or not _INTEGER.fullmatch(
                w.text.partition("=")[2])) for w in words[1:]):
            self.problem(f"{words[0].text} -i evaluates its values arithmetically")
        self.check_name_arguments(words)
        nested = self.commands[nested_start:]
        del self.commands[nested_start:]
        self.emit(words, self.text(node), self.frame.wrappers)
        self.commands.extend(nested)

    def word_of(self, node: Node) -> Word:
        """A here-string word, without walking it (the redirection walk does that)."""
        text = self.text(node)
        if node.type in ("word", "raw_string", "ansi_c_string", "number") or (
                node.type == "string" and not any(
                    c.type != "string_content" for c in node.named_children)):
            return self.resolve(node, 0)
        return Word(text, text, dynamic=True)

    # -- arithmetic --------------------------------------------------------------------------

    def arithmetic(self, node: Node, depth: int) -> None:
        """Walk an arithmetic context: note names it reads, find substitutions it runs."""
        stack = [node]
        while stack:
            current = stack.pop()
            kind = current.type
            if kind in ("variable_name", "word") and _IDENTIFIER.fullmatch(self.text(current)):
                self.arith_refs.add(self.text(current))
            elif kind in ("raw_string", "string_content", "word") and (
                    "$(" in self.text(current) or "`" in self.text(current)):
                self.problem("arithmetic on text that holds a command substitution")
            if kind in ("command_substitution", "process_substitution"):
                self.substitution(current, depth + 1)
                continue
            if kind == "do_group":
                continue
            stack.extend(reversed(current.children))

    # -- words -------------------------------------------------------------------------------

    def substitution(self, node: Node, depth: int) -> None:
        """Walk `$(...)`, `<(...)`, `>(...)` or a backquoted command.

        Why: inside backquotes bash first drops the backslash before a backslash, a dollar or
        a backquote and only then parses the body, so an escaped backquote there starts a
        nested command that the parse tree shows as plain text; such a body is parsed again.
        """
        children = node.children
        text = self.text(node)
        if children and children[0].type == "`" and "\\" in text:
            escapable = "\\$`" + ('"' if _inside_double_quotes(node) else "")
            body = re.sub(r"\\([" + re.escape(escapable) + "])", r"\1", text[1:-1])
            self.script(body, self.frame.wrappers, self.frame.where)
            return
        for child in children:
            self.walk(child, depth + 1)

    def find_substitutions(self, node: Node, depth: int, *, test: bool = False) -> None:
        """Walk every command or process substitution under `node`.

        In a `[[ ... ]]` test (``test``), `-eq`-style comparisons and `-v` are arithmetic too.
        """
        if depth > _MAX_NODE_DEPTH:
            self.problem("nested too deeply to analyse")
            return
        for child in node.children:
            kind = child.type
            if kind in ("command_substitution", "process_substitution"):
                self.substitution(child, depth + 1)
            elif kind in ("arithmetic_expansion", "subscript") or (
                    test and self.compares_numbers(child)):
                self.arithmetic(child, depth + 1)
            elif not test and (child.is_error or child.is_missing):
                self.walk(child, depth + 1)
            else:
                if kind == "expansion":
                    self.note_indirection(child)
                self.find_substitutions(child, depth + 1, test=test)

    def compares_numbers(self, node: Node) -> bool:
        """Whether a `[[ ... ]]` expression is an `-eq`-style comparison or `-v`."""
        operator = node.child_by_field_name("operator")
        return (node.type in ("binary_expression", "unary_expression") and operator is not None
                and self.text(operator) in _ARITH_TEST_OPERATORS)

    def note_indirection(self, node: Node) -> None:
        """`${!name}` resolves a name held in a variable, subscripts included."""
        children = node.children
        if len(children) > 1 and children[1].type == "!":
            for child in children:
                if child.type == "variable_name":
                    self.arith_refs.add(self.text(child))

    def resolve(self, node: Node, depth: int) -> Word:
        """The word bash would make of `node`, walking any substitution inside it."""
        kind = node.type
        text = self.text(node)
        if depth > _MAX_NODE_DEPTH:
            self.problem("nested too deeply to analyse")
            return Word(text, text, dynamic=True)
        if node.is_error or node.is_missing:
            self.walk(node, depth)
            return Word(text, text, dynamic=True)
        if kind in ("word", "extglob_pattern"):
            value, shape, glob, mismatch = unescape_unquoted(text)
            return Word(value, text, glob=glob, shape=shape, mismatch=mismatch)
        if kind == "number":
            return Word(text, text, shape=text)
        if kind == "raw_string":
            self.check_quotes(text, text[1:-1], "'", escapes=False)
            return Word(text[1:-1], text, shape="x" * (len(text) - 2))
        if kind == "ansi_c_string":
            self.check_quotes(text, text[2:-1], "'", escapes=True)
            value = decode_ansi_c(text[2:-1])
            return Word(value, text, shape="x" * len(value))
        if kind in ("string", "translated_string"):
            return self.resolve_string(node, depth)
        if kind == "concatenation":
            return self.join([self.resolve(c, depth + 1) for c in node.children], text)
        if kind in _EXPANSION_TYPES:
            if kind in ("command_substitution", "process_substitution"):
                self.substitution(node, depth + 1)
            elif kind == "arithmetic_expansion":
                self.arithmetic(node, depth + 1)
            else:
                if kind == "expansion":
                    self.note_indirection(node)
                self.find_substitutions(node, depth + 1)
            return Word(text, text, dynamic=True)
        if not node.is_named:
            value, shape, glob, mismatch = unescape_unquoted(text)
            return Word(value, text, glob=glob, shape=shape, mismatch=mismatch)
        if kind != "array":
            self.problem(f"unsupported shell word: {kind}")
        self.find_substitutions(node, depth + 1)
        return Word(text, text, dynamic=True)

    def resolve_string(self, node: Node, depth: int) -> Word:
        text = self.text(node)
        dynamic = False
        for child in node.named_children:
            if child.type != "string_content":
                dynamic = True
                self.resolve(child, depth + 1)
        if dynamic:
            return Word(text, text, dynamic=True)
        body = text[text.find('"') + 1:-1] if text.endswith('"') else text
        self.check_quotes(text, body, '"', escapes=True)
        value = unescape_double_quoted(body)
        return Word(value, text, shape="x" * len(value))

    def check_quotes(self, text: str, body: str, quote: str, *, escapes: bool) -> None:
        if quote_closes_early(body, quote, escapes=escapes):
            self.problem(f"cannot tell where bash ends the quoted string {_snippet(text)!r}")

    @staticmethod
    def join(parts: list[Word], source: str) -> Word:
        dynamic = any(p.dynamic for p in parts)
        shape = "".join(p.shape if not p.dynamic else "$" for p in parts)
        return Word(
            text=source if dynamic else "".join(p.text for p in parts),
            dynamic=dynamic, source=source, glob=any(p.glob for p in parts), shape=shape,
            mismatch=any(p.mismatch for p in parts))

    def words(self, nodes: list[Node], depth: int) -> list[Word]:
        """Resolve argv nodes, rejoining pieces bash keeps as one word.

        Why: tree-sitter ends a word at a line continuation (`g\\<newline>it`) and reads `$"x"`
        as two nodes, where bash sees a single word.
        """
        groups: list[list[Node]] = []
        src = self.frame.src
        for node in nodes:
            if groups:
                gap = src[groups[-1][-1].end_byte:node.start_byte]
                if not gap.replace(b"\\\n", b""):
                    groups[-1].append(node)
                    continue
            groups.append([node])
        out: list[Word] = []
        for nodes_of_word in groups:
            group = nodes_of_word
            if len(group) > 1 and not group[0].is_named and group[0].type == "$" and (
                    group[1].type == "string"):
                group = group[1:]
            parts = [self.resolve(n, depth + 1) for n in group]
            source = _decode(src[nodes_of_word[0].start_byte:group[-1].end_byte])
            word = self.join(parts, source)
            if has_brace_expansion(word.shape) and not word.dynamic:
                word = Word(word.source, word.source, dynamic=True, glob=word.glob,
                            shape=word.shape)
            if word.mismatch:
                self.problem(f"cannot tell how bash splits {_snippet(word.source)!r}")
            out.append(word)
        return out

    # -- commands ----------------------------------------------------------------------------

    def command(self, node: Node, depth: int, outer_redirects: list[Node]) -> None:
        """A simple command: assignments, redirections, then its words."""
        argv_nodes: list[Node] = []
        redirects: list[Node] = []
        assignments: list[Node] = []
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if field_name == "name":
                argv_nodes.extend(child.children if child.type == "command_name" else [child])
            elif field_name == "argument":
                argv_nodes.append(child)
            elif child.type == "variable_assignment":
                assignments.append(child)
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                redirects.append(child)
            elif child.is_error or child.is_missing:
                self.walk(child, depth + 1)
            elif child.is_named and child.type != "comment":
                self.problem(f"unsupported shell syntax: {child.type}")
                self.find_substitutions(child, depth + 1)
        redirect_starts = {r.start_byte for r in [*redirects, *outer_redirects]}
        for argv_node in argv_nodes:
            if argv_node.end_byte in redirect_starts and _FD_WORD.fullmatch(
                    self.text(argv_node)):
                # Bash reads `0<<<x` or `{fd}>x` as one redirection; the parser split it.
                self.problem(f"cannot tell whether {self.text(argv_node)!r} is part of a "
                             "redirection")
        stdin = self.stdin_of([*redirects, *outer_redirects])
        argv_nodes.extend(self.stray_arguments([*redirects, *outer_redirects]))
        argv_nodes.sort(key=lambda n: n.start_byte)
        nested_start = len(self.commands)
        for assignment in assignments:
            self.assignment(assignment, depth + 1)
        words = self.words(argv_nodes, depth)
        for redirect in redirects:
            self.redirect(redirect, depth + 1)
        nested = self.commands[nested_start:]
        del self.commands[nested_start:]
        if words:
            end = max([node.end_byte, *(n.end_byte for n in argv_nodes)])
            source = _decode(self.frame.src[node.start_byte:end])
            self.run(words, source, self.frame.wrappers, stdin)
        self.commands.extend(nested)

    def emit(self, words: list[Word], source: str, wrappers: tuple[str, ...]) -> None:
        argv = tuple(w.text for w in words)
        self.commands.append(SimpleCommand(
            argv=argv, dynamic=tuple(w.dynamic for w in words), text=" ".join(argv),
            source=source, wrappers=wrappers, globbed=tuple(w.glob for w in words)))

    def check_name_arguments(self, words: list[Word]) -> None:
        if not words or words[0].dynamic or words[0].text not in _NAME_TAKING:
            return
        name = words[0].text
        if name in ("printf", "test", "[") and not any(w.text == "-v" for w in words):
            return
        if any(not w.dynamic and ("$(" in w.text or "`" in w.text) for w in words[1:]):
            self.problem(f"{words[0].text} may evaluate the command substitution text it is given")

    def run(self, words: list[Word], source: str, wrappers: tuple[str, ...],
            stdin: str | None) -> None:
        """Emit the command `words` would run, looking through wrappers and inline scripts."""
        while words:
            head = words[0]
            if head.dynamic:
                self.problem(f"command name is only known at run time: {_snippet(head.source)}")
                self.emit(words, source, wrappers)
                return
            if head.glob:
                self.problem(f"command name is a glob pattern: {_snippet(head.source)}")
            name = posixpath.basename(head.text) if "/" in head.text.rstrip("/") else head.text
            if name in WRAPPERS:
                if name == "exec" and len(words) == 1:
                    return
                next_words = self.through_wrapper(name, words, source, wrappers)
                if next_words is None:
                    return
                words, wrappers = next_words, (*wrappers, name)
                continue
            if name in _SHELLS:
                self.shell(name, words, source, wrappers, stdin)
                return
            if name in _FOREIGN_SHELLS:
                self.foreign_shell(name, words, source, wrappers)
                return
            if name in ("su", "runuser"):
                self.su(name, words, source, wrappers, stdin)
                return
            if name == "trap" and self.trap(words, wrappers):
                return
            self.emit(words, source, wrappers)
            self.builtin_checks(name, words, source, wrappers)
            return

    def builtin_checks(self, name: str, words: list[Word], source: str,
                       wrappers: tuple[str, ...]) -> None:
        """Problems and nested commands that come from what one command does."""
        if name in _CODE_RUNNERS:
            self.problem(_CODE_RUNNERS[name])
        elif name == "find":
            self.find_exec(words, source, wrappers)
        elif name == "shopt" and any(w.text == "expand_aliases" for w in words):
            self.problem("turns on alias expansion")
        elif name == "hash" and any(w.text.startswith("-") and "p" in w.text for w in words):
            self.problem("hash -p changes which program a name runs")
        elif name == "enable" and any(w.text.startswith("-") and "f" in w.text for w in words):
            self.problem("enable -f loads a builtin from a shared object")
        elif name in ("mapfile", "readarray") and any(
                w.text.startswith("-") and "C" in w.text for w in words):
            self.problem(f"{name} -C runs a callback")
        elif name == "compgen" and any(
                w.text.startswith("-") and ("C" in w.text or "F" in w.text) for w in words):
            self.problem("compgen -C/-F runs code")
        if name == "let":
            for word in words[1:]:
                self.arith_refs.update(_IDENTIFIER.findall(word.text))
        if name in ("read", "mapfile", "readarray", "getopts"):
            self.tainted.update(w.text for w in words[1:] if _IDENTIFIER.fullmatch(w.text))
        if name == "printf":
            for index, word in enumerate(words[:-1]):
                if word.text == "-v":
                    self.tainted.add(words[index + 1].text)
        self.check_name_arguments(words)

    def through_wrapper(self, name: str, words: list[Word], source: str,
                        wrappers: tuple[str, ...]) -> list[Word] | None:
        """The wrapped command's words, or None once the wrapper has been dealt with."""
        result = unwrap(name, words[1:])
        self.writes.extend(result.writes)
        for assigned in result.assignments:
            if _risky_env(assigned):
                self.problem(f"sets {assigned}, which can make commands run other code")
        if result.problem is not None:
            self.problem(result.problem)
            self.emit(words, source, wrappers)
            return None
        if result.no_command:
            self.emit(words, source, wrappers)
            return None
        inner = result.inner
        if result.split_string is not None:
            split = self.split_string(result.split_string)
            if split is None:
                self.problem("env -S with a string that cannot be split statically")
                self.emit(words, source, wrappers)
                return None
            inner = split + inner
        if name == "sudo" and not inner and any(
                o in result.options for o in ("-i", "-s", "--login", "--shell")):
            self.problem("sudo starts a shell that reads commands from stdin")
        if name == "doas" and not inner and "-s" in result.options:
            self.problem("doas starts a shell that reads commands from stdin")
        if name == "xargs":
            inner = self.xargs_words(inner, result.options)
        if name == "watch" and "-x" not in result.options and "--exec" not in result.options:
            if inner:
                if any(w.dynamic for w in inner):
                    self.problem("watch runs a command line only known at run time")
                    self.emit(words, source, wrappers)
                    return None
                self.script(" ".join(w.text for w in inner), (*wrappers, name), "watch")
            else:
                self.emit(words, source, wrappers)
            return None
        if not inner:
            self.emit(words, source, wrappers)
            return None
        return inner

    @staticmethod
    def split_string(text: str) -> list[Word] | None:
        if "$" in text or "\\" in text or "#" in text:
            return None
        out: list[Word] = []
        current: list[str] = []
        quote = ""
        started = False
        for ch in text:
            if quote:
                if ch == quote:
                    quote = ""
                else:
                    current.append(ch)
            elif ch in "'\"":
                quote = ch
                started = True
            elif ch in " \t\n\f\v\r":
                if started or current:
                    out.append(_static("".join(current)))
                current, started = [], False
            else:
                current.append(ch)
        if quote:
            return None
        if started or current:
            out.append(_static("".join(current)))
        return out

    @staticmethod
    def xargs_words(inner: list[Word], options: dict[str, str | None]) -> list[Word]:
        """xargs adds words read from stdin: the replace string's words or trailing ones."""
        replace: str | None = None
        if "-I" in options:
            replace = options["-I"]
        elif "-i" in options or "--replace" in options:
            replace = options.get("-i") or options.get("--replace") or "{}"
        if not inner:
            inner = [_static("echo")]
        if replace:
            return [Word(w.text, w.source, dynamic=True) if replace in w.text else w
                    for w in inner]
        return [*inner, Word("...", "...", dynamic=True)]

    def find_exec(self, words: list[Word], source: str, wrappers: tuple[str, ...]) -> None:
        """`find ... -exec CMD {} ;` runs CMD once per file (or once per batch with `+`)."""
        index = 1
        expression = False
        if any(w.dynamic for w in words) and any(
                not w.dynamic and w.text in (";", "+", "{}") for w in words):
            self.problem("find arguments only known at run time next to -exec")
        while index < len(words):
            word = words[index]
            if word.dynamic:
                if expression:
                    self.problem("find expression only known at run time")
                index += 1
                continue
            expression = expression or word.text[:1] in ("-", "(", "!")
            if word.text not in _FIND_EXEC:
                index += 1
                continue
            end = index + 1
            while end < len(words) and not (
                    not words[end].dynamic and words[end].text in (";", "+")
                    and (words[end].text == ";" or words[end - 1].text == "{}")):
                end += 1
            if end >= len(words):
                self.problem(f"find {words[index].text} without a terminating ';' or '+'")
            inner = [Word(w.text, w.source, dynamic=True) if "{}" in w.text else w
                     for w in words[index + 1:end]]
            if inner:
                self.run(inner, source, (*wrappers, "find"), None)
            index = end + 1

    def trap(self, words: list[Word], wrappers: tuple[str, ...]) -> bool:
        """`trap ACTION SIGNAL...` runs ACTION later; True when the action was analysed."""
        args = words[1:]
        if args and args[0].text == "--":
            args = args[1:]
        if len(args) < 2 or (args[0].text.startswith("-") and not args[0].dynamic):
            return False
        action = args[0]
        if action.dynamic:
            self.problem("trap with an action only known at run time")
            return False
        if not action.text:
            return False
        self.script(action.text, (*wrappers, "trap"), "trap")
        return True

    def shell(self, name: str, words: list[Word], source: str, wrappers: tuple[str, ...],
              stdin: str | None) -> None:
        """`bash -c SCRIPT`, `bash -s`, `bash <<EOF`: analyse the script; `bash FILE` runs FILE."""
        command_mode = stdin_mode = False
        index = 1
        while index < len(words):
            word = words[index]
            if word.dynamic:
                self.problem(f"{name} -c with a script only known at run time" if command_mode
                             else f"{name} options only known at run time: "
                                  f"{_snippet(word.source)}")
                self.emit(words, source, wrappers)
                return
            arg = word.text
            if arg in ("--", "-"):
                index += 1
                break
            if arg.startswith("--"):
                index += 2 if arg in _SHELL_LONG_VALUED else 1
                continue
            if len(arg) > 1 and arg[0] in "-+":
                letters = arg[1:]
                command_mode = command_mode or "c" in letters
                stdin_mode = stdin_mode or "s" in letters
                index += 1 + sum(1 for ch in letters if ch in _SHELL_VALUED)
                continue
            break
        rest = words[index:]
        if command_mode and rest:
            self.command_script(name, words, source, wrappers, rest[0])
        elif not command_mode and (stdin_mode or not rest):
            self.stdin_script(name, words, source, wrappers, stdin,
                              no_stdin=f"{name} reads a script from stdin")
        else:
            self.emit(words, source, wrappers)

    def command_script(self, name: str, words: list[Word], source: str,
                       wrappers: tuple[str, ...], script: Word) -> None:
        """The script a shell's `-c` runs."""
        if script.dynamic:
            self.problem(f"{name} -c with a script only known at run time")
            self.emit(words, source, wrappers)
            return
        self.script(script.text, (*wrappers, name), f"{name} -c")

    def stdin_script(self, name: str, words: list[Word], source: str, wrappers: tuple[str, ...],
                     stdin: str | None, *, no_stdin: str) -> None:
        """The script a shell reads from stdin; ``no_stdin`` is the problem when no
        here-document or here-string gives it."""
        if stdin is None:
            self.problem(no_stdin)
            self.emit(words, source, wrappers)
            return
        self.script(stdin, (*wrappers, name), f"{name} stdin")

    def foreign_shell(self, name: str, words: list[Word], source: str,
                      wrappers: tuple[str, ...]) -> None:
        self.emit(words, source, wrappers)
        if len(words) == 1 or any(w.dynamic or (w.text.startswith("-") and "c" in w.text)
                                  for w in words[1:]):
            self.problem(f"{name} runs a script this analyser cannot parse")

    def su(self, name: str, words: list[Word], source: str, wrappers: tuple[str, ...],
           stdin: str | None) -> None:
        """`su [user] -c SCRIPT` runs SCRIPT with the user's shell."""
        script: Word | None = None
        index = 1
        while index < len(words):
            word = words[index]
            if word.dynamic:
                self.problem(f"{name} arguments only known at run time")
                self.emit(words, source, wrappers)
                return
            arg = word.text
            if arg in ("-c", "--command", "-C", "--session-command"):
                script = words[index + 1] if index + 1 < len(words) else None
                index += 2
                continue
            if arg.startswith(("--command=", "--session-command=")):
                value = arg.partition("=")[2]
                script = Word(value, value)
                index += 1
                continue
            if arg in ("-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w",
                       "--whitelist-environment"):
                index += 2
                continue
            index += 1
        if script is None:
            self.stdin_script(name, words, source, wrappers, stdin,
                              no_stdin=f"{name} starts a shell that reads commands from stdin")
        else:
            self.command_script(name, words, source, wrappers, script)

    # -- end of analysis ---------------------------------------------------------------------

    def finish(self) -> None:
        risky = sorted(self.arith_refs & self.tainted)
        if risky:
            self.problem("arithmetic reads " + ", ".join(risky)
                         + ", whose value could hold a command")


def _glued_lines(src: bytes, root: Node) -> list[int]:
    """Offsets of newlines the parser put inside a command's word instead of ending it.

    Why: tree-sitter-bash reads `ls` NEWLINE `\\rm x` as `ls` with an argument starting with
    the newline, where bash runs two commands.
    """
    found: list[int] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "word" and src[node.start_byte:node.start_byte + 1] == b"\n":
            parent = node.parent
            if parent is not None and parent.type == "command_name":
                parent = parent.parent
            if parent is not None and parent.type in (
                    "command", "file_redirect", "herestring_redirect") and (
                    src[node.start_byte - 1:node.start_byte] != b"\\"):
                found.append(node.start_byte)
            continue
        stack.extend(node.children)
    return found


def _inside_double_quotes(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "string":
            return True
        if parent.type in ("command_substitution", "process_substitution"):
            return False
        parent = parent.parent
    return False


_GAP_FILLER = re.compile(rb"(?:[ \t\n]|\\\n)*")


def _uncovered(src: bytes, root: Node) -> str | None:
    """Source text no parse node accounts for, if any.

    Why: tree-sitter silently skips some text bash reads as a word (`\\ ` alone, a stray
    carriage return), so anything between nodes other than blanks and line continuations
    means the parse cannot be trusted.
    """
    stack = [root]
    while stack:
        node = stack.pop()
        children = node.children
        if not children or node.type in ("heredoc_body", "comment"):
            continue
        position = node.start_byte
        for child in children:
            if child.start_byte > position and not _GAP_FILLER.fullmatch(
                    src, position, child.start_byte):
                return _decode(src[position:child.start_byte])
            position = max(position, child.end_byte)
        end = len(src) if node.type == "program" else node.end_byte
        if end > position and not _GAP_FILLER.fullmatch(src, position, end):
            return _decode(src[position:end])
        stack.extend(children)
    return None


def analyse(command: str) -> ShellAnalysis:
    """Find every simple command `command` may run, and say whether the list is whole.

    Why: permission rules are matched against each program a command line runs, never the
    raw string, so chaining, wrappers, quoting and nested scripts cannot hide a command.
    """
    walker = _Walker()
    try:
        walker.script(command, (), "")
        walker.finish()
    except (RecursionError, MemoryError):
        walker.problems.append("too complex to analyse")
    except Exception as exc:  # noqa: BLE001 - an analyser bug must ask, never allow
        walker.problems.append(f"internal error while analysing: {type(exc).__name__}")
    return ShellAnalysis(
        commands=tuple(walker.commands), complete=not walker.problems,
        problems=tuple(walker.problems), writes=tuple(walker.writes),
        reads=tuple(walker.reads))
