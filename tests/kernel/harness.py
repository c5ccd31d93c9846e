"""A real ipykernel driven through jupyter_client, with the test acting as the frontend.

``KernelSession.execute`` sends a cell and collects every iopub message until the cell is idle;
``on_message`` lets a test answer widget comm messages (``ready``, a decision) while the cell
runs, as JupyterLab would, on the main shell or on a subshell.
"""

from __future__ import annotations

import os
import queue
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

ANSI = re.compile(r"\x1b\[[0-9;]*m")
ROOT = Path(__file__).resolve().parents[2]


def kernel_env(home: Path) -> dict[str, str]:
    """The environment of a test kernel: a scratch home, no plugins, no provider keys."""
    env = {k: v for k, v in os.environ.items()
           if not k.endswith(("_API_KEY", "_BASE_URL")) and k not in ("AGENT_EXT_MODEL",
                                                                       "JPY_SESSION_NAME")}
    env.update(HOME=str(home), AGENT_EXT_CONFIG_DIR=str(home / ".agent_ext"),
               AGENT_EXT_PLUGINS="none", PYTHONPATH=str(ROOT), PYDEVD_DISABLE_FILE_VALIDATION="1")
    return env


@dataclass
class Execution:
    """One executed cell: its reply and the iopub messages parented to it (and the others)."""

    msg_id: str
    reply: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    foreign: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def status(self) -> str:
        return str(self.reply["content"]["status"])

    @property
    def stdout(self) -> str:
        return "".join(m["content"]["text"] for m in self.messages
                       if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")

    @property
    def error(self) -> str:
        """``ename: evalue`` of a failed cell ("" when it succeeded)."""
        content = self.reply.get("content", {})
        if content.get("status") != "error":
            return ""
        return ANSI.sub("", f"{content.get('ename')}: {content.get('evalue')}")

    @property
    def text(self) -> str:
        """Everything the cell showed, as text (streams, text/plain of displays, errors)."""
        parts = []
        for m in self.messages:
            content = m["content"]
            if m["msg_type"] == "stream":
                parts.append(content["text"])
            elif m["msg_type"] in ("display_data", "update_display_data", "execute_result"):
                parts.append(content["data"].get("text/plain", "") + "\n")
            elif m["msg_type"] == "error":
                parts.append(ANSI.sub("", "\n".join(content["traceback"])) + "\n")
        return "".join(parts)

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["msg_type"] in types]


Handler = Callable[["KernelSession", dict[str, Any]], None]


class KernelSession:
    """A started kernel and its client (see the module docstring)."""

    def __init__(self, km: KernelManager) -> None:
        self.km = km
        self.kc = km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def execute(self, code: str, *, timeout: float = 30, on_message: Handler | None = None,
                allow_stdin: bool = False, stdin: Callable[[dict[str, Any]], str] | None = None,
                during: Callable[[float], None] | None = None,
                cell_id: str | None = None) -> Execution:
        """Run ``code``; ``on_message`` sees every iopub message, ``during`` is polled.

        ``cell_id`` is sent as the request's ``cellId`` metadata, as JupyterLab does.
        """
        if cell_id is None:
            msg_id = self.kc.execute(code, allow_stdin=allow_stdin)
        else:
            msg = self.kc.session.msg("execute_request", {
                "code": code, "silent": False, "store_history": True, "user_expressions": {},
                "allow_stdin": allow_stdin, "stop_on_error": True},
                metadata={"cellId": cell_id})
            self.kc.shell_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
        start = time.monotonic()
        run = Execution(msg_id, {})
        idle = False
        while not idle:
            elapsed = time.monotonic() - start
            if elapsed > timeout:
                raise TimeoutError(f"cell did not finish in {timeout} s:\n{code}\n{run.text}")
            if during is not None:
                during(elapsed)
            if stdin is not None:
                self._answer_stdin(stdin)
            try:
                msg = self.kc.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                continue
            if on_message is not None:
                on_message(self, msg)
            if msg["parent_header"].get("msg_id") != msg_id:
                run.foreign.append(msg)
                continue
            run.messages.append(msg)
            idle = (msg["msg_type"] == "status"
                    and msg["content"]["execution_state"] == "idle")
        run.reply = self._reply(msg_id, timeout)
        run.seconds = time.monotonic() - start
        return run

    def _reply(self, msg_id: str, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = self.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                return dict(reply)
        raise TimeoutError("no execute_reply")

    def _answer_stdin(self, answer: Callable[[dict[str, Any]], str]) -> None:
        try:
            msg = self.kc.get_stdin_msg(timeout=0.01)
        except queue.Empty:
            return
        self.kc.input(answer(msg))

    def ok(self, code: str, **kwargs: Any) -> Execution:
        """Run ``code`` and insist that it succeeded."""
        run = self.execute(code, **kwargs)
        assert run.status == "ok", run.text
        return run

    # -- acting as a widget frontend ------------------------------------------------------------

    def send_custom(self, comm_id: str, content: dict[str, Any],
                    subshell_id: str | None = None) -> None:
        """A widget's ``model.send(content)``: an ipywidgets ``custom`` comm message."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id,
                                               "data": {"method": "custom", "content": content}})
        if subshell_id is not None:
            msg["header"]["subshell_id"] = subshell_id
        self.kc.shell_channel.send(msg)

    def create_subshell(self) -> str:
        """A new kernel subshell (ipykernel 7's ``create_subshell_request``), as JupyterLab does."""
        msg = self.kc.session.msg("create_subshell_request", {})
        self.kc.control_channel.send(msg)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            reply = self.kc.get_control_msg(timeout=10)
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                return str(reply["content"]["subshell_id"])
        raise TimeoutError("no create_subshell_reply")

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@contextmanager
def running_kernel(home: Path, cwd: Path) -> Iterator[KernelSession]:
    """A fresh kernel in ``cwd`` with ``home`` as its home; always shut down."""
    home.mkdir(parents=True, exist_ok=True)
    km = KernelManager(kernel_name="python3")
    km.start_kernel(env=kernel_env(home), cwd=str(cwd),
                    extra_arguments=["--HistoryManager.hist_file=:memory:"])
    session: KernelSession | None = None
    try:
        session = KernelSession(km)
        yield session
    finally:
        if session is not None:
            session.kc.stop_channels()
        if km.has_kernel:
            km.shutdown_kernel(now=True)


def widget_model(msg: dict[str, Any]) -> str:
    """The class name of the anywidget a ``comm_open`` creates ("" for anything else)."""
    if msg["msg_type"] != "comm_open":
        return ""
    state = msg["content"].get("data", {}).get("state", {})
    return str(state.get("_anywidget_id", "")).rsplit(".", 1)[-1]


