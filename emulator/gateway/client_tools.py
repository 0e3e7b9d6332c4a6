"""Anthropic's client tools on `/messages`: tools whose schema Anthropic defines and the
client runs (the text editor, bash, memory). The model calls them as it calls a custom
tool, with `tool_use` blocks of their fixed name; the app runs the command and sends
back a `tool_result`. Each is given here the input schema its calls follow, so a
generated call is one the app can run: the editor and memory view a path (the one the
user wrote, when there is one), bash runs a harmless command.
"""

from __future__ import annotations

from typing import Any

_PATH = {"type": "string", "description": "The file or directory to view"}
_VIEW_PATH = {
    "type": "object",
    "properties": {"command": {"const": "view"}, "path": _PATH},
    "required": ["command", "path"],
    "additionalProperties": False,
}
_EDITOR = (
    "View, create and edit text files: commands view, create, str_replace and insert, on "
    "an absolute or relative path."
)
_BASH = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "enum": ["ls -la", "pwd", "git status", "cat README.md", "python --version"],
        }
    },
    "required": ["command"],
    "additionalProperties": False,
}
_MEMORY = {
    "type": "object",
    "properties": {"command": {"const": "view"}, "path": {"const": "/memories"}},
    "required": ["command", "path"],
    "additionalProperties": False,
}

# type -> (the name Anthropic requires, a description, the schema of the calls made)
CLIENT_TOOLS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "text_editor_20250124": ("str_replace_editor", _EDITOR, _VIEW_PATH),
    "text_editor_20250429": ("str_replace_based_edit_tool", _EDITOR, _VIEW_PATH),
    "text_editor_20250728": ("str_replace_based_edit_tool", _EDITOR, _VIEW_PATH),
    "bash_20241022": ("bash", "Run a shell command in a persistent session.", _BASH),
    "bash_20250124": ("bash", "Run a shell command in a persistent session.", _BASH),
    "memory_20250818": ("memory", "Store and read files in the /memories directory.", _MEMORY),
}


def check_name(kind: str, name: str | None) -> None:
    """Anthropic's API takes each client tool by its own name only."""
    wanted = CLIENT_TOOLS[kind][0]
    if name != wanted:
        raise ValueError(f"the {kind} tool is called {wanted!r}")


def described(raw: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A client tool's description and input schema; a custom tool's own."""
    known = CLIENT_TOOLS.get(raw.get("type") or "")
    if known is not None:
        return known[1], known[2]
    return raw.get("description", ""), raw.get("input_schema", {})
