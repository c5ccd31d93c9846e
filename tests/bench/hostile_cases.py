"""The hostile inputs: patterns that make backtracking matchers explode, on every search path;
giant and deeply nested arguments; repeated-word queries; floods of output; commands that never
end or detach; devices that never end; a ten-million-line file, a 19 MB line, a 25 MB file
edited unread, and a huge notebook.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

MARKER = f"agent_ext_hostile_{os.getpid()}"

REDOS = ["(a+)+$", "(a|aa)+$", "(.*a){20}", "([a-z]+)*$", "(x+x+)+y", "^(a?){30}a{30}$",
         "(\\w+\\s?)+$", "((a|b)*)*c", "(a*)*b", "(.*){30}z"]
#: A line that makes the patterns above backtrack in a matcher that can.
EVIL_LINE = "a" * 40 + "!"


def prepare(root: Path) -> None:
    """The files the cases use."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "evil.txt").write_text((EVIL_LINE + "\n") * 200)
    with (root / "ten_million.txt").open("wb") as f:
        f.write(b"x\n" * 10_000_000)
    cells = [{"id": f"c{i}", "cell_type": "code", "execution_count": i, "metadata": {},
              "source": EVIL_LINE, "outputs": [{"output_type": "stream", "name": "stdout",
                                                "text": "y" * 2_000 + "\n"}]}
             for i in range(3_000)]
    (root / "big.ipynb").write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {"language_info": {"name": "python"}},
        "cells": cells}))
    (root / "one_line.txt").write_bytes(b"a" * 19_000_000)
    with (root / "unread.log").open("wb") as f:
        for _ in range(25):
            f.write(b"log line\n" * 116_509)
    deep = root / "deep"
    for i in range(2_000):
        (deep / f"d{i % 40}").mkdir(parents=True, exist_ok=True)
        (deep / f"d{i % 40}" / f"f{i}.txt").write_text("content\n")


def _deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"file_path": "evil.txt"}
    inner = value
    for _ in range(depth):
        inner["x"] = {}
        inner = inner["x"]
    return value


CASES: list[tuple[str, str, Any]] = [
    *((f"grep file {p}", "grep", {"pattern": p, "path": "evil.txt", "output_mode": "content"})
      for p in REDOS),
    *((f"grep nb:// {p}", "grep", {"pattern": p, "path": "nb://big.ipynb"}) for p in REDOS),
    *((f"grep folder {p}", "grep", {"pattern": p, "output_mode": "count"}) for p in REDOS[:5]),
    *((f"grep multiline {p}", "grep", {"pattern": p, "path": "evil.txt", "multiline": True})
      for p in REDOS[:5]),
    *((f"glob {p}", "glob", {"pattern": p}) for p in (
        "**/**/**/**/**/**/**/*", "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}/**",
        "**/*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*.txt", "*" * 200, "deep/**/f1*")),
    ("args nested 5,000 deep", "read_file", _deep(5_000)),
    ("args as JSON nested 100,000 deep", "read_file",
     '{"file_path": "evil.txt", "a": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    ("args a 5 MB string", "write_file", {"file_path": "huge.txt", "content": "z" * 5_000_000}),
    ("args 200,000 values", "read_file", {"file_path": "evil.txt", "a": list(range(200_000))}),
    ("args a 2 MB old_string", "edit", {"file_path": "evil.txt", "old_string": "q" * 2_000_000,
                                        "new_string": "r"}),
    ("tool_search one word 100 KB", "tool_search", {"query": "email " * 17_000}),
    ("tool_search 20,000 distinct words", "tool_search",
     {"query": " ".join(f"w{i}" for i in range(20_000))}),
    ("tool_search one 100 KB word", "tool_search", {"query": "e" * 100_000}),
    ("tool_search select of 10,000 names", "tool_search",
     {"query": "select:" + ",".join(f"tool_{i}" for i in range(10_000))}),
    ("shell 200 MB of output", "shell", {"command": "yes 0123456789abcdef | head -c 200000000"}),
    ("shell 200 MB without newlines", "shell", {"command": "head -c 200000000 /dev/zero"}),
    ("shell never ends", "shell", {"command": "sleep 1000", "timeout": 2}),
    ("shell output forever", "shell", {"command": "yes", "timeout": 3}),
    ("shell /dev/zero forever", "shell", {"command": "cat /dev/zero", "timeout": 3}),
    ("shell detaches", "shell",
     {"command": f"(exec -a {MARKER} sleep 1000 &) ; nohup bash -c 'exec -a {MARKER} sleep 1000'"
                 " >/dev/null 2>&1 & echo started"}),
    ("shell clears its environment and detaches", "shell",
     {"command": f"env -i setsid -f bash -c 'exec -a {MARKER} sleep 1000'; echo started"}),
    ("shell background flood", "shell", {"command": "yes", "run_in_background": True}),
    ("shell background never ends", "shell",
     {"command": f"bash -c 'exec -a {MARKER} sleep 1000'", "run_in_background": True}),
    ("shell a line of 50 MB", "shell", {"command": "head -c 50000000 /dev/zero | tr '\\0' a"}),
    ("read_file /dev/zero", "read_file", {"file_path": "/dev/zero"}),
    ("read_file /dev/urandom", "read_file", {"file_path": "/dev/urandom"}),
    ("read_file ten million lines", "read_file", {"file_path": "ten_million.txt"}),
    ("read_file the end of ten million lines", "read_file",
     {"file_path": "ten_million.txt", "offset": 9_999_990}),
    ("read_file a range of ten million lines", "read_file",
     {"file_path": "ten_million.txt:5000000-5000100"}),
    ("grep ten million lines, content", "grep",
     {"pattern": "x", "path": "ten_million.txt", "output_mode": "content"}),
    ("grep ten million lines, count", "grep",
     {"pattern": "x", "path": "ten_million.txt", "output_mode": "count"}),
    ("grep /dev/zero", "grep", {"pattern": "a", "path": "/dev/zero"}),
    ("edit ten million lines, absent text", "edit",
     {"file_path": "ten_million.txt", "old_string": "x\ny\nx\n", "new_string": "z"}),
    ("read_file one line of 19 MB", "read_file", {"file_path": "one_line.txt"}),
    ("edit a 25 MB file never read", "edit",
     {"file_path": "unread.log", "old_string": "log line\n", "new_string": "x\n"}),
    ("write_file over ten million lines", "write_file",
     {"file_path": "ten_million.txt", "content": "x\n"}),
    ("args as JSON text of 12 MB", "write_file",
     '{"file_path": "j.txt", "content": "' + "z" * 12_000_000 + '"}'),
    ("shell_output of the flooding job", "shell_output", {"job_id": "shell_1", "offset": -100}),
    ("read_file the huge notebook", "read_file", {"file_path": "big.ipynb"}),
    ("read nb:// all cells", "read_file", {"file_path": "nb://big.ipynb:source"}),
    ("ls a folder of 2,000 files", "ls", {"path": "deep", "all": True}),
    ("glob 2,000 files", "glob", {"pattern": "**/*.txt"}),
]
