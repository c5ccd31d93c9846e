"""The built-in tools, registered lazily: nothing here is imported until first used."""

from __future__ import annotations

from agent_ext.core.registry import Registry

#: (name, "module:attribute", deferred, aliases other agents use for it)
BUILTINS: tuple[tuple[str, str, bool, tuple[str, ...]], ...] = (
    ("tool_search", "agent_ext.tools.tool_search:ToolSearchTool", False,
     ("ToolSearch", "tool_search_tool")),
    ("read_file", "agent_ext.tools.read_file:ReadFileTool", False, ("Read", "read", "view", "cat")),
    ("edit", "agent_ext.tools.edit:EditTool", False, ("Edit", "replace", "str_replace")),
    ("write_file", "agent_ext.tools.write_file:WriteFileTool", False, ("Write", "create_file")),
    ("grep", "agent_ext.tools.grep:GrepTool", False,
     ("Grep", "grep_search", "search_file_content", "search")),
    ("glob", "agent_ext.tools.glob:GlobTool", False, ("Glob", "find_files")),
    ("ls", "agent_ext.tools.ls:LsTool", False, ("LS", "list_directory", "list_dir")),
    ("notebook_edit", "agent_ext.tools.notebook_edit:NotebookEditTool", False,
     ("NotebookEdit", "edit_notebook")),
    ("run_cell", "agent_ext.tools.run_cell:RunCellTool", False, ("RunCell",)),
    ("shell", "agent_ext.tools.shell:ShellTool", False, ("Bash", "run_shell_command")),
    ("shell_output", "agent_ext.tools.shell_jobs:ShellOutputTool", True,
     ("BashOutput", "shell_output_tool")),
    ("shell_kill", "agent_ext.tools.shell_jobs:ShellKillTool", True, ("KillShell", "KillBash")),
    ("todo_write", "agent_ext.tools.todo_write:TodoWriteTool", False, ("TodoWrite",)),
    ("ask_user", "agent_ext.tools.ask_user:AskUserTool", False, ("AskUserQuestion",)),
    ("web_fetch", "agent_ext.tools.web_fetch:WebFetchTool", True, ("WebFetch",)),
)

#: Built-ins the compact profile (small context windows) defers: rarely needed in a short
#: session, still listed by name and loaded with tool_search (or called by name).
COMPACT_DEFERRED: tuple[str, ...] = ("ask_user", "glob", "ls", "run_cell", "todo_write")


def register_builtins(registry: Registry) -> None:
    """Register every built-in tool (lazily) with its aliases, and what compact defers."""
    for name, spec, defer, aliases in BUILTINS:
        registry.register_lazy(name, spec, defer=defer, aliases=aliases)
    registry.defer_in_profile("compact", COMPACT_DEFERRED)
