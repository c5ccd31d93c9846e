"""HTML to markdown-ish text with the standard library: what a model needs of a web page.

Headings, paragraphs, lists, links as ``[text](href)``, code blocks and simple tables survive;
scripts, styles and other non-content elements are dropped. A few times smaller than the HTML,
and readable without a browser. No new dependency: ``html.parser`` tolerates broken markup.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "canvas", "iframe",
                   "object", "embed", "select", "button", "math"})
_BLOCK = frozenset({"p", "div", "section", "article", "main", "header", "footer", "nav",
                    "aside", "figure", "figcaption", "form", "fieldset", "address", "details",
                    "summary", "dl", "table", "center"})
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed",
                   "param", "source", "track", "wbr"})
_SPACE = re.compile(r"[ \t\r\n\f\v]+")
#: The markdown mark of an inline tag, written where it opens and again where it closes.
_INLINE_MARKS = {"strong": "**", "b": "**", "em": "*", "i": "*"}
_BLANKS = re.compile(r"\n{3,}")


class _Converter(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base_url
        self.out: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False
        self._pre = 0
        self._lists: list[list[int]] = []  # per open list: [ordered, next number]
        self._links: list[tuple[int, str]] = []  # output index where each open link starts
        self._cells = 0

    # -- output helpers ----------------------------------------------------------------------

    def _ends_with(self) -> str:
        tail = ""
        for piece in reversed(self.out):
            tail = piece + tail
            if len(tail) >= 2:
                break
        return tail[-2:]

    def _break(self, lines: int) -> None:
        """Make the output end with ``lines`` newlines (1: new line, 2: blank line)."""
        if not self.out:
            return
        end = self._ends_with()
        have = 2 if end == "\n\n" else 1 if end.endswith("\n") else 0
        if have < lines:
            self.out.append("\n" * (lines - have))

    def _indent(self) -> str:
        return "  " * max(0, len(self._lists) - 1)

    # -- parser callbacks --------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._outside_blocks(tag, opening=True):
            return
        attr = dict(attrs)
        if tag in _BLOCK:
            self._break(2)
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._break(2)
            self.out.append("#" * int(tag[1]) + " ")
        elif tag in ("ul", "ol"):
            self._break(1 if self._lists else 2)
            self._lists.append([tag == "ol", int(attr.get("start") or 1)
                                if (attr.get("start") or "").isdigit() else 1])
        elif tag == "li":
            self._break(1)
            if self._lists and self._lists[-1][0]:
                self.out.append(f"{self._indent()}{self._lists[-1][1]}. ")
                self._lists[-1][1] += 1
            else:
                self.out.append(f"{self._indent()}- ")
        elif tag == "pre":
            self._break(2)
            self.out.append("```\n")
            self._pre += 1
        elif tag == "a":
            self._links.append((len(self.out), attr.get("href") or ""))
        elif tag == "br":
            self.out.append("\n")
        elif tag == "hr":
            self._break(2)
            self.out.append("---\n\n")
        elif tag == "img" and attr.get("alt"):
            self.out.append(f"[image: {attr['alt']}]")
        elif tag == "blockquote":
            self._break(2)
            self.out.append("> ")
        elif tag == "tr":
            self._break(1)
            self._cells = 0
        elif tag in ("td", "th"):
            if self._cells:
                self.out.append(" | ")
            self._cells += 1
        elif tag in ("dt", "dd"):
            self._break(1)
            if tag == "dd":
                self.out.append(": ")

    def handle_endtag(self, tag: str) -> None:
        if self._outside_blocks(tag, opening=False):
            return
        if tag in _BLOCK or tag in ("h1", "h2", "h3", "h4", "h5", "h6", "blockquote"):
            self._break(2)
        elif tag in ("ul", "ol"):
            if self._lists:
                self._lists.pop()
            self._break(1 if self._lists else 2)
        elif tag == "pre" and self._pre:
            self._pre -= 1
            self._break(1)
            self.out.append("```\n\n")
        elif tag == "a" and self._links:
            self._close_link()

    def _outside_blocks(self, tag: str, *, opening: bool) -> bool:
        """Handle a tag that shapes no block (a skipped element, the title, an inline mark) or
        one inside a skipped element; whether it was such a tag."""
        if tag in _SKIP:
            if tag not in _VOID:
                self._skip = self._skip + 1 if opening else max(0, self._skip - 1)
            return True
        if tag == "title":
            self._in_title = opening
            return True
        return bool(self._skip) or self._inline_mark(tag)

    def _inline_mark(self, tag: str) -> bool:
        """Write the mark of an inline tag (code outside ``pre``, bold, italic), the same where
        it opens and where it closes; whether ``tag`` was one."""
        mark = "`" if tag == "code" and not self._pre else _INLINE_MARKS.get(tag)
        if mark is not None:
            self.out.append(mark)
        return mark is not None

    def _close_link(self) -> None:
        start, href = self._links.pop()
        text = _SPACE.sub(" ", "".join(self.out[start:])).strip()
        del self.out[start:]
        href = href.strip()
        if not text:
            return
        if not href or href.startswith(("javascript:", "#", "data:")):
            self.out.append(text)
            return
        self.out.append(f"[{text}]({urljoin(self.base, href)})")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip:
            return
        if self._pre:
            self.out.append(data)
            return
        text = _SPACE.sub(" ", data)
        if not text.strip():
            if text and self.out and not self._ends_with().endswith((" ", "\n")):
                self.out.append(" ")
            return
        if self._ends_with().endswith("\n") or not self.out:
            text = text.lstrip()
        self.out.append(text)


def html_to_text(html: str, base_url: str = "") -> tuple[str, str]:
    """``(title, text)`` of an HTML document; links are made absolute against ``base_url``."""
    converter = _Converter(base_url)
    converter.feed(html)
    converter.close()
    while converter._links:
        converter._close_link()
    text = "".join(converter.out)
    lines = [line.rstrip() for line in text.split("\n")]
    text = _BLANKS.sub("\n\n", "\n".join(lines)).strip()
    return " ".join(converter.title.split()), text
