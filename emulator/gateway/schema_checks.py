"""The schemas a request brings, checked before anything is routed or held: its tools'
(unique names, usable schemas of objects, a named choice that exists) and its
structured output's."""

from __future__ import annotations

import json

from emulator.errors import ValidationFailed
from emulator.gateway.canonical import ForcedTool, Request, Tool
from emulator.gateway.schema_values import SchemaProblem, check_schema

_TOOL_PLACES = {"responses": ("tools[{}]", "parameters"), "messages": ("tools[{}]", "input_schema")}


def check_tools(request: Request, endpoint: str) -> None:
    """Tool names are unique (as the providers require: a call names its tool); a
    tool's parameters must be a JSON schema of an object that arguments can be drawn
    for; a named tool choice must exist."""
    # Where the client wrote a tool's fields, and its schema: chat nests them under
    # `function`, Anthropic's format calls the schema `input_schema`.
    where, schema = _TOOL_PLACES.get(endpoint, ("tools[{}].function", "parameters"))
    seen: set[str] = set()
    for at, tool in enumerate(request.tools):
        index = at if tool.index is None else tool.index
        if tool.name in seen:
            raise ValidationFailed(
                f"Tool names must be unique: {tool.name!r} is given twice. Rename or drop one.",
                param=where.format(index) + ".name",
                code="duplicate_tool_name",
            )
        seen.add(tool.name)
        try:
            check_schema(tool.parameters)
        except SchemaProblem as exc:
            raise ValidationFailed(
                f"The parameters of tool {tool.name!r} cannot be used: {exc.message}.",
                param=f"{where.format(index)}.{schema}",
                code="invalid_tool_schema",
            ) from exc
        _check_object_schema(tool, endpoint, f"{where.format(index)}.{schema}")
    if request.tool_choice == "required" and not request.tools:
        raise ValidationFailed(
            "tool_choice `required` needs at least one tool in `tools`.", param="tool_choice"
        )
    choice = request.tool_choice
    if isinstance(choice, ForcedTool) and choice.name not in {t.name for t in request.tools}:
        raise ValidationFailed(
            f"tool_choice names {request.tool_choice!r}, which is not among `tools`.",
            param="tool_choice",
        )


def _check_object_schema(tool: Tool, endpoint: str, param: str) -> None:
    """A tool's arguments are an object: its schema says `"type": "object"` (Anthropic's
    API requires it; OpenAI's refuses another type and takes a schema without one)."""
    kind = tool.parameters.get("type")
    if kind == "object" or (kind is None and endpoint != "messages"):
        return
    got = "no `type`" if kind is None else f"`type: {json.dumps(kind)}`"
    raise ValidationFailed(
        f'The parameters of tool {tool.name!r} must be a JSON schema of `type: "object"` '
        f"(a call's arguments are an object), got {got}.",
        param=param,
        code="invalid_tool_schema",
    )


# Where the client wrote the structured-output schema, per endpoint.
_SCHEMA_PARAM = {
    "chat.completions": "response_format.json_schema.schema",
    "messages": "output_config.format.schema",  # or where `Request.format_field` says
}


def check_output_schema(request: Request, endpoint: str) -> None:
    """A `json_schema` response format must be a JSON schema a value can be drawn for."""
    fmt = request.response_format
    if not fmt or fmt.get("type") != "json_schema":
        return
    try:
        check_schema(fmt.get("schema") or {})
    except SchemaProblem as exc:
        raise ValidationFailed(
            f"The structured-output schema cannot be used: {exc.message}.",
            param=f"{request.format_field}.schema"
            if request.format_field
            else _SCHEMA_PARAM.get(endpoint, "text.format.schema"),
            code="invalid_response_format",
        ) from exc
