"""The tools of a `/messages` request: custom tools (a `name` and an `input_schema`),
which the client runs, and web search, which the gateway runs (`web_search`): OpenRouter's
server tool (`openrouter:web_search`) or Anthropic's own (`web_search_20250305` and its
successors, answered in Anthropic's blocks by `native_search`). Anthropic's other server
tools are refused: nothing here would run them. Anthropic's client tools (the text
editor, bash, memory: `client_tools`) are custom tools whose schema Anthropic defines.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from emulator.bodies import OpenWireModel
from emulator.errors import ValidationFailed
from emulator.gateway import client_tools
from emulator.gateway.chat_messages import CacheControl
from emulator.gateway.client_tools import CLIENT_TOOLS
from emulator.gateway.server_tools import KINDS, NATIVE_FETCH, NATIVE_FETCH_TOOLS, ServerToolType
from emulator.gateway.web_fetch import Domain
from emulator.gateway.web_search import ANTHROPIC_TOOLS

SEARCH_NAME = "web_search"  # the name Anthropic's web search tool is called by
SearchType = Literal[
    "openrouter:web_search", "web_search_20250305", "web_search_20260209", "web_search_20260318"
]
ClientToolType = Literal[
    "text_editor_20250124",
    "text_editor_20250429",
    "text_editor_20250728",
    "bash_20241022",
    "bash_20250124",
    "memory_20250818",
]
FetchType = Literal[
    "web_fetch_20250910", "web_fetch_20260209", "web_fetch_20260309", "web_fetch_20260318"
]


class UserLocation(OpenWireModel):
    """Where the user is, for Anthropic's search to rank by: taken, not used."""

    type: Literal["approximate"]
    city: Annotated[str, Field(min_length=1, max_length=255)] | None = None
    region: Annotated[str, Field(min_length=1, max_length=255)] | None = None
    country: Annotated[str, Field(min_length=2, max_length=2)] | None = None
    timezone: Annotated[str, Field(min_length=1, max_length=255)] | None = None


class FetchCitations(OpenWireModel):
    enabled: bool


class Tool(OpenWireModel):
    type: Literal["custom"] | SearchType | FetchType | ServerToolType | ClientToolType | None = None
    name: Annotated[
        Annotated[str, Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")] | None,
        Field(validate_default=True),
    ] = None
    description: str | None = None
    input_schema: Annotated[dict[str, Any] | None, Field(validate_default=True)] = None
    cache_control: CacheControl | None = None
    # Anthropic's web search and web fetch tools
    max_uses: Annotated[int, Field(ge=1)] | None = None
    allowed_domains: list[Domain] | None = None
    blocked_domains: list[Domain] | None = None
    user_location: UserLocation | None = None
    max_content_tokens: Annotated[int, Field(ge=1)] | None = None  # web fetch's
    citations: FetchCitations | None = None  # web fetch's

    @model_validator(mode="before")
    @classmethod
    def _known_kind(cls, data: Any) -> Any:
        """Another server tool would fail on its missing `input_schema`: say what it is."""
        kind = data.get("type") if isinstance(data, dict) else None
        known = (None, "custom", "openrouter:web_search", *ANTHROPIC_TOOLS, *KINDS, *CLIENT_TOOLS)
        known += tuple(NATIVE_FETCH_TOOLS)
        if kind not in known:
            raise ValueError(
                f"server tools such as {kind!r} are not emulated; send custom tools (a "
                "`name` and an `input_schema`), web search (`web_search_20250305`, "
                "`openrouter:web_search`, `plugins` or a model id ending in `:online`), "
                "web fetch (`web_fetch_20250910`, `openrouter:web_fetch`), "
                "`openrouter:datetime`, `openrouter:image_generation` or Anthropic's client "
                "tools (`text_editor_20250728`, `bash_20250124`, `memory_20250818`)"
            )
        return data

    @field_validator("name")
    @classmethod
    def _named(cls, name: str | None, info: ValidationInfo) -> str | None:
        kind = info.data.get("type")
        if kind in ANTHROPIC_TOOLS and name != SEARCH_NAME:
            raise ValueError(f"the web search tool is called {SEARCH_NAME!r}")
        if kind in NATIVE_FETCH_TOOLS and name != NATIVE_FETCH:
            raise ValueError(f"the web fetch tool is called {NATIVE_FETCH!r}")
        if kind in CLIENT_TOOLS:
            client_tools.check_name(kind, name)
        if name is None and kind != "openrouter:web_search" and kind not in KINDS:
            raise ValueError("Field required")
        return name

    @field_validator("input_schema")
    @classmethod
    def _custom_has_schema(cls, schema: Any, info: ValidationInfo) -> Any:
        if schema is None and info.data.get("type") in (None, "custom"):
            raise ValueError("Field required")
        return schema

    @model_validator(mode="after")
    def _one_domain_filter(self) -> Tool:
        if self.allowed_domains is not None and self.blocked_domains is not None:
            raise ValueError("send `allowed_domains` or `blocked_domains`, not both")
        return self

    @property
    def searches(self) -> bool:
        known = self.type in (None, "custom") or self.type in KINDS or self.type in CLIENT_TOOLS
        return not known and not self.fetches

    @property
    def fetches(self) -> bool:
        """Anthropic's web fetch tool (OpenRouter's server tools count with neither)."""
        return self.type in NATIVE_FETCH_TOOLS


class ToolChoice(OpenWireModel):
    type: Literal["auto", "any", "tool", "none"]
    name: str | None = None
    disable_parallel_tool_use: bool | None = None

    @model_validator(mode="after")
    def _a_tool_is_named(self) -> ToolChoice:
        if self.type == "tool" and not self.name:
            raise ValueError('tool_choice `{"type": "tool"}` needs the `name` of a tool')
        return self


def check_search_tools(tools: list[Tool]) -> None:
    """One web search tool and one web fetch tool at most, whose names no custom tool
    takes."""
    kinds = {"web search": [t.searches for t in tools], "web fetch": [t.fetches for t in tools]}
    for what, runs in kinds.items():
        given = [index for index, ran in enumerate(runs) if ran]
        if len(given) > 1:
            raise ValidationFailed(
                f"Send one {what} tool: the gateway runs it once a request.",
                param=f"tools[{given[1]}]",
            )
        names = {tools[index].name for index in given}
        for index, tool in enumerate(tools):
            if tool.type in (None, "custom") and tool.name in names:
                raise ValidationFailed(
                    f"Tool names must be unique: {tool.name!r} is the {what} tool's too.",
                    param=f"tools[{index}].name",
                    code="duplicate_tool_name",
                )
