"""No message shows a literal ``{name}``: every placeholder in the product's text is filled.

Three ways one slips through, each scanned over the whole package: a piece of an implicitly
joined message written without its ``f`` prefix; a plain string with a placeholder raised as an
error; and a template constant used without ``.format``. Then every ``%agent`` command is run
without arguments and with a bad one in a real IPython shell, and what it says is checked.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable, Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "agent_ext"
PLACEHOLDER = re.compile(r"(?<!\{)\{[A-Za-z_][\w.]*(\[[^\]]*\])?(![rsa])?(:[^{}]*)?\}(?!\})")
_PREFIX = re.compile(r"^([A-Za-z]*)['\"]")


def _sources() -> Iterator[tuple[Path, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, path.read_text(encoding="utf-8")


def _joined_pieces(text: str) -> Iterator[list[tokenize.TokenInfo]]:
    """Runs of adjacent string tokens (one implicitly joined string each)."""
    run: list[tokenize.TokenInfo] = []
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING:
            run.append(tok)
        elif tok.type not in skip or tok.type == tokenize.NEWLINE:
            if len(run) > 1:
                yield run
            run = []
    if len(run) > 1:
        yield run


def _is_f(tok: tokenize.TokenInfo) -> bool:
    found = _PREFIX.match(tok.string)
    return bool(found and "f" in found.group(1).lower())


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def pieces_without_f(sources: Iterable[tuple[str, str]]) -> list[str]:
    """Pieces of implicitly joined f-strings that hold a placeholder but have no ``f``."""
    found = []
    for name, text in sources:
        for run in _joined_pieces(text):
            if any(_is_f(t) for t in run):
                found += [f"{name}:{t.start[0]}: {t.string}" for t in run
                          if not _is_f(t) and PLACEHOLDER.search(ast.literal_eval(t.string))]
    return found


def raised_unfilled(sources: Iterable[tuple[str, str]]) -> list[str]:
    """Plain strings with a placeholder given to an error, a failed result or a notice."""
    found = []
    for name, text in sources:
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
                node.func, "id", "")
            if not (func.endswith("Error") or func in ("fail", "Notice", "record")):
                continue
            found += [f"{name}:{a.lineno}: {v[:80]}" for a in node.args
                      if (v := _literal(a)) is not None and PLACEHOLDER.search(v)]
    return found


def unformatted_templates(sources: Iterable[tuple[str, str]]) -> list[str]:
    """Upper-case template constants (``NO_RULES = "... {name} ..."``) read without
    ``.format``, in their own module or through another (``module.NO_RULES``)."""
    trees = [(name, ast.parse(text)) for name, text in sources]
    templates = {t.id for _, tree in trees for node in tree.body if isinstance(node, ast.Assign)
                 for t in node.targets if isinstance(t, ast.Name) and t.id.isupper()
                 and (v := _literal(node.value)) is not None and PLACEHOLDER.search(v)}
    bare = []
    for name, tree in trees:
        formatted = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                     and n.attr in ("format", "format_map")}
        for node in ast.walk(tree):
            used = (node.id if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                    else node.attr if isinstance(node, ast.Attribute) else None)
            if used in templates and id(node) not in formatted:
                bare.append(f"{name}:{getattr(node, 'lineno', 0)}: {used}")
    return bare


def _package() -> list[tuple[str, str]]:
    return [(str(path.relative_to(PACKAGE)), text) for path, text in _sources()]


def test_no_joined_message_has_a_piece_without_its_f() -> None:
    assert not pieces_without_f(_package())


def test_no_error_is_raised_with_an_unfilled_placeholder() -> None:
    assert not raised_unfilled(_package())


def test_every_template_constant_is_formatted_where_it_is_used() -> None:
    assert not unformatted_templates(_package())


SAMPLE = '''
HINT = "type `%agent {name} RULE`"

def usage(name):
    text = (f"type `%agent {name} RULE`, e.g. "
            "`%agent {name} read_file`")
    print(HINT)
    print(HINT.format(name=name))
    raise UsageError("no rule named {name}")

ok = f"{{name}} stays literal " "and {{this}} too"
'''


def test_the_scans_find_each_kind_of_slip() -> None:
    sample = [("sample.py", SAMPLE)]
    assert pieces_without_f(sample) == ['sample.py:6: "`%agent {name} read_file`"']
    assert raised_unfilled(sample) == ["sample.py:9: no rule named {name}"]
    assert unformatted_templates(sample) == ["sample.py:7: HINT"]
