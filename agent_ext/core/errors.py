"""Errors split by audience: codes the model sees, exceptions developers see."""

from __future__ import annotations


class ErrorCode:
    """Stable string codes carried by error results (shared by every tool and adapter)."""

    INVALID_TOOL_PARAMS = "invalid_tool_params"
    UNKNOWN_TOOL = "unknown_tool"
    TOOL_DISABLED = "tool_disabled"
    TOOL_LOAD_FAILED = "tool_load_failed"
    EXECUTION_FAILED = "execution_failed"
    EXECUTION_DENIED = "execution_denied"
    EXECUTION_CANCELLED = "execution_cancelled"
    EXECUTION_TIMEOUT = "execution_timeout"
    UNHANDLED_EXCEPTION = "unhandled_exception"
    FILE_NOT_FOUND = "file_not_found"
    FILE_WRITE_FAILURE = "file_write_failure"
    READ_CONTENT_FAILURE = "read_content_failure"
    ATTEMPT_TO_CREATE_EXISTING_FILE = "attempt_to_create_existing_file"
    TARGET_IS_DIRECTORY = "target_is_directory"
    TARGET_NOT_REGULAR_FILE = "target_not_regular_file"
    EDIT_PREPARATION_FAILURE = "edit_preparation_failure"
    EDIT_NO_OCCURRENCE_FOUND = "edit_no_occurrence_found"
    EDIT_EXPECTED_OCCURRENCE_MISMATCH = "edit_expected_occurrence_mismatch"
    EDIT_NO_CHANGE = "edit_no_change"
    EDIT_REQUIRES_PRIOR_READ = "edit_requires_prior_read"
    FILE_CHANGED_SINCE_READ = "file_changed_since_read"
    PRIOR_READ_VERIFICATION_FAILED = "prior_read_verification_failed"
    NOTEBOOK_EDIT_FAILURE = "notebook_edit_failure"
    NOTEBOOK_INVALID_JSON = "notebook_invalid_json"
    NOTEBOOK_CELL_NOT_FOUND = "notebook_cell_not_found"
    GLOB_EXECUTION_ERROR = "glob_execution_error"
    GREP_EXECUTION_ERROR = "grep_execution_error"
    LS_EXECUTION_ERROR = "ls_execution_error"
    PATH_IS_NOT_A_DIRECTORY = "path_is_not_a_directory"
    TOOL_SEARCH_FAILED = "tool_search_failed"


class AgentExtError(Exception):
    """Base of the exceptions agent_ext raises to developers and users."""


class ToolRegistrationError(AgentExtError):
    """A tool definition is wrong; the message lists every problem found at once."""


class ToolLoadError(AgentExtError):
    """A lazily registered tool failed to load. Raised again on every later use."""

    def __init__(self, name: str, cause: BaseException) -> None:
        super().__init__(f"tool {name!r} failed to load: {type(cause).__name__}: {cause}")
        self.name = name
        self.cause = cause


class UnknownToolError(AgentExtError, KeyError):
    """No tool by that name (after alias resolution)."""

    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        self.name = name
        self.suggestions = suggestions or []
        close = ", ".join(map(repr, self.suggestions))
        hint = f"; did you mean {close}?" if close else ""
        super().__init__(f"no tool named {name!r}{hint}")

    def __str__(self) -> str:
        return str(self.args[0])
