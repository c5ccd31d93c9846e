"""The tour notebooks run headless, end to end, and show what they promise.

They run from a copy in a scratch folder (they also move into a scratch folder of their own),
under nbclient as nbval and papermill would, and once through ``jupyter execute``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _execute(name: str, workdir: Path) -> list[str]:
    """Run notebook ``name`` from a copy in ``workdir``; the text output of each code cell."""
    copy = workdir / name
    shutil.copy(NOTEBOOKS / name, copy)
    nb = nbformat.read(copy, as_version=4)
    NotebookClient(nb, timeout=60, kernel_name="python3",
                   resources={"metadata": {"path": str(workdir)}}).execute()
    return ["".join(o.get("text", "") or o.get("data", {}).get("text/plain", "")
                    or o.get("evalue", "") for o in c.outputs)
            for c in nb.cells if c.cell_type == "code"]


def test_quickstart(workdir: Path) -> None:
    out = "\n".join(_execute("quickstart.ipynb", workdir))
    assert "model: demo (replay)" in out
    assert "Reading meeting_notes.md with read_file." in out
    assert "Ship the release on Friday." in out  # the read
    assert "[approval] edit " in out and "rejected by the headless policy" in out
    assert "We will recieve the data on Monday." in out  # the edit was not made
    assert "NameError" in out  # the tour's own failing cell
    assert ("[approval] notebook_edit " in out and "edit cell 10 · [ ] · `prices = [3.50, 4.25"
            in out)  # the cell fix, named as the user sees the cell, refused headless
    assert "The cell was not changed" in out
    assert "Nothing to undo" in out
    assert '"name": "plot_chart"' in out  # tool_search found the deferred tool
    assert "send_email [deferred]" in out  # the catalogue's text fallback
    assert not list(workdir.glob("*.md")), "the tour works in a scratch folder of its own"


def test_permissions_and_headless(workdir: Path) -> None:
    outs = _execute("permissions_and_headless.ipynb", workdir)
    exists = [o.strip() for o in outs if o.strip() in ("True", "False")]
    # default: rejected headless; plan: refused; headless_allow: approved; allow rule: runs;
    # deny rule beats the allow rule.
    assert exists == ["False", "False", "True", "True", "False"]
    text = "\n".join(outs)
    assert "rejected by the headless policy" in text
    assert "approved by the headless policy" in text
    assert "plan mode" in text
    assert "deny: write_note" in text


def test_jupyter_execute_finishes_by_itself(tmp_path: Path) -> None:
    copy = tmp_path / "quickstart.ipynb"
    shutil.copy(NOTEBOOKS / "quickstart.ipynb", copy)
    jupyter_execute = Path(sys.executable).with_name("jupyter-execute")
    done = subprocess.run([str(jupyter_execute), "--timeout=60", str(copy)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=110, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
