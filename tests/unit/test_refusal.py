"""One refusal type for the model: every layer's refusal carries its code first and makes the
same error result, so a tool catches one type."""

from __future__ import annotations

import pytest

from agent_ext.core import AgentExtError, ErrorCode, ToolRefusal
from agent_ext.notebook.document import NotebookError
from agent_ext.urls import URLError
from agent_ext.urls.router import UnknownSchemeError


@pytest.mark.parametrize("kind", [ToolRefusal, URLError, NotebookError])
def test_each_refusal_takes_code_then_message_and_makes_the_error_result(
        kind: type[ToolRefusal]) -> None:
    refusal = kind(ErrorCode.FILE_NOT_FOUND, "No such thing; list them with ls.")
    assert isinstance(refusal, ToolRefusal)
    assert (refusal.code, refusal.message, str(refusal)) == (
        ErrorCode.FILE_NOT_FOUND, "No such thing; list them with ls.",
        "No such thing; list them with ls.")
    result = refusal.result()
    assert result.is_error and result.error is not None
    assert (result.error.code, result.text) == (ErrorCode.FILE_NOT_FOUND, refusal.message)


def test_an_unknown_scheme_is_a_refusal_with_the_params_code() -> None:
    err = UnknownSchemeError("zz", "zz://x", ["var"])
    assert isinstance(err, ToolRefusal) and isinstance(err, AgentExtError)
    assert err.code == ErrorCode.INVALID_TOOL_PARAMS
    assert str(err).startswith("Unknown URL scheme 'zz' in 'zz://x'. Registered schemes: var://.")
