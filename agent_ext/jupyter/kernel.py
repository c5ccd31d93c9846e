"""The kernel as tools see it: the user namespace, the input history, and running code.

``run_code`` runs in-process, from the agent's own awaiting cell: an execute_request sent to
this kernel would queue behind that cell and never start while the agent waits for it. The
code is compiled with top-level ``await`` allowed and run in ``user_ns`` on the kernel's thread
and loop (so Kernel -> Interrupt stops it like any cell); stdout, stderr and displays are
captured for the call, and a last expression becomes the execute_result, as in a cell.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Mapping
from typing import Any

from IPython.utils.capture import capture_output

from agent_ext.core.kernel import RunOutput

_FILENAME = "<agent_ext run_cell>"


class IPythonKernel:
    """``KernelProvider`` over an IPython shell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def user_namespace(self) -> Mapping[str, object]:
        ns: Mapping[str, object] = self.shell.user_ns
        return ns

    def input_history(self, last: int | None = None) -> list[tuple[int, str]]:
        # The raw inputs, as typed (In holds them after IPython's transformations).
        manager = getattr(self.shell, "history_manager", None)
        inputs = getattr(manager, "input_hist_raw", None) or self.shell.user_ns.get("In") or []
        found = [(i, src) for i, src in enumerate(inputs) if i > 0 and src]
        return found[-last:] if last else found

    async def run_code(self, code: str) -> RunOutput:
        shell = self.shell
        count = shell.execution_count
        shell.execution_count += 1
        outputs: list[dict[str, Any]] = []
        error: dict[str, Any] | None = None
        value: object = None
        with capture_output(stdout=True, stderr=True, display=True) as captured:
            try:
                value = await self._execute(code)
            except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001  the cell's own error
                error = self._error(exc)
        if captured.stdout:
            outputs.append({"output_type": "stream", "name": "stdout", "text": captured.stdout})
        if captured.stderr:
            outputs.append({"output_type": "stream", "name": "stderr", "text": captured.stderr})
        outputs += [{"output_type": "display_data", "data": dict(out.data),
                     "metadata": dict(out.metadata or {})} for out in captured.outputs]
        if value is not None and error is None:
            data, metadata = shell.display_formatter.format(value)
            outputs.append({"output_type": "execute_result", "data": dict(data),
                            "metadata": dict(metadata), "execution_count": count})
        if error is not None:
            outputs.append(error)
        return RunOutput(outputs=outputs, execution_count=count, error=error)

    async def _execute(self, code: str) -> object:
        """Run ``code`` in the user namespace; the value of a last expression, else None."""
        tree = ast.parse(code, _FILENAME)
        last: ast.expr | None = None
        tail = tree.body[-1] if tree.body else None
        if isinstance(tail, ast.Expr):
            last = tail.value
            tree.body.pop()
        ns = self.shell.user_ns
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        if tree.body:
            ran = eval(compile(tree, _FILENAME, "exec", flags=flags), ns)  # noqa: S307
            if inspect.iscoroutine(ran):
                await ran
        if last is None:
            return None
        value = eval(compile(ast.Expression(last), _FILENAME, "eval", flags=flags), ns)  # noqa: S307
        if inspect.iscoroutine(value):
            value = await value
        return value

    def _error(self, exc: BaseException) -> dict[str, Any]:
        etype, evalue, tb = type(exc), exc, exc.__traceback__
        try:
            stb = self.shell.InteractiveTB.structured_traceback(etype, evalue, tb)
        except Exception:  # noqa: BLE001  a broken traceback formatter must not hide the error
            stb = [f"{etype.__name__}: {evalue}"]
        return {"output_type": "error", "ename": etype.__name__, "evalue": str(evalue),
                "traceback": list(stb)}


def kernel_provider(shell: Any) -> IPythonKernel | None:
    """The provider for ``shell``, or None outside IPython."""
    return IPythonKernel(shell) if shell is not None and hasattr(shell, "user_ns") else None


__all__ = ["IPythonKernel", "kernel_provider"]
