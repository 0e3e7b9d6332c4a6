"""The shape of each fixtures file: one pydantic model a file (or section), checked
field by field as it is read (`emulator.store.fixtures` reads the folder)."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    PositiveInt,
    field_validator,
    model_validator,
)

from emulator.clock import EARLIEST, LATEST, parse_iso
from emulator.errors import ValidationFailed
from emulator.gateway.auto_router import AUTO
from emulator.gateway.routing import VARIANT_SORTS
from emulator.gateway.scripted import compiled
from emulator.gateway.web_search import ONLINE
from emulator.keys.rules import Label, Product, ResetInterval, Scope, check_key_rules
from emulator.settings import why_unsendable

SCOPES = ("ai.gateway", "video", "studio.media")
WIRE_FORMATS = ("chat", "responses", "messages")
RESET_INTERVALS = ("daily", "weekly", "monthly")
# The largest number a fixture may hold: the API's own bound on amounts, far inside
# what SQLite stores (a larger one overflowed when written, a traceback).
LARGEST = 10**15


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > LARGEST:
            raise ValueError(f"at most {LARGEST:,} (10^15)")
        return value


def _sendable(credential: str) -> str:
    why = why_unsendable(credential)
    if why is not None:  # no client could send it: the key or token would never match
        raise ValueError(f"a credential {why}")
    return credential


# A key secret or user token: what a client sends, so the `--admin-token` rule holds.
Credential = Annotated[str, AfterValidator(_sendable)]


class KeyFixture(_Strict):
    """A key as `POST /api/v1/keys` would make it: one it would refuse loaded, and every
    later `PATCH` of the key was refused over fields the client never sent."""

    id: str
    secret: Credential
    name: str
    scopes: list[Scope] = Field(min_length=1)
    product: Product = "ai_gateway"
    environment: Label = "production"
    spend_limit_micros: int | None = Field(default=None, ge=0)
    spend_reset_interval: ResetInterval | None = None
    rate_limit_rpm: int | None = Field(default=None, ge=1)
    status: Literal["active", "disabled"] = "active"

    @model_validator(mode="after")
    def _as_the_api_makes_them(self) -> KeyFixture:
        if len(set(self.scopes)) != len(self.scopes):
            raise ValueError("a scope is listed twice")
        try:
            check_key_rules(
                self.product, self.scopes, self.spend_limit_micros, self.spend_reset_interval
            )
        except ValidationFailed as exc:
            raise ValueError(f"{exc.param}: {exc.message}") from None
        return self


class AccountFixture(_Strict):
    id: str
    name: str
    balance_micros: int = Field(ge=0)
    studio_credits: int = Field(default=0, ge=0)
    rate_limit_rpm: int | None = Field(default=None, ge=1)
    premium_approved: bool = False
    user_tokens: list[Credential] = []
    keys: list[KeyFixture] = []


class ProviderFixture(_Strict):
    name: str
    display_name: str
    wire_format: Literal["chat", "responses", "messages"]
    latency_ms: int = Field(default=500, ge=0)
    throughput_tps: int = Field(default=100, ge=1)
    behavior: Literal["ok", "fail", "slow"] = "ok"
    status: Literal["up", "down", "slow"] = "up"
    description: str = "An emulated provider: deterministic, no upstream is called."


class ModelProviderFixture(_Strict):
    provider: str
    prompt_micros_per_mtok: int = Field(ge=0)
    completion_micros_per_mtok: int = Field(ge=0)
    image_micros: int = Field(default=0, ge=0)
    request_micros: int = Field(default=0, ge=0)
    # Prompt caching (`gateway.prompt_cache`): a route with a read price caches; a
    # `messages` route's writes (at `cache_control` breakpoints) cost the write price.
    cache_read_micros_per_mtok: int | None = Field(default=None, ge=0)
    cache_write_micros_per_mtok: int | None = Field(default=None, ge=0)
    # Generated images' output tokens (`gateway.image_output`); none: the completion price.
    image_output_micros_per_mtok: int | None = Field(default=None, ge=0)
    # Sound's output tokens (`gateway.audio_output`); none: the completion price.
    audio_output_micros_per_mtok: int | None = Field(default=None, ge=0)
    # Audio's prompt tokens (`gateway.audio`); none: the prompt price.
    audio_input_micros_per_mtok: int | None = Field(default=None, ge=0)
    context_length: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _reads_cost_no_more(self) -> ModelProviderFixture:
        # The hold prices a prompt without the cache: a dearer read would overrun it.
        read = self.cache_read_micros_per_mtok
        if read is not None and read > self.prompt_micros_per_mtok:
            raise ValueError("cache_read_micros_per_mtok must not exceed prompt_micros_per_mtok")
        return self

    max_output_tokens: int | None = Field(default=None, ge=1)


# What the gateway strips from a requested model id before the catalog is asked.
ROUTING_SUFFIXES = (ONLINE, *(f":{variant}" for variant in VARIANT_SORTS))


class ModelFixture(_Strict):
    id: str
    name: str
    description: str
    created: date
    context_length: int = Field(ge=1)
    max_output_tokens: int = Field(ge=1)
    modality: Literal["text", "image", "video", "audio"] = "text"
    input_modalities: list[Literal["text", "image", "file", "audio", "video"]] = ["text"]
    # `image`, `audio`: answers with images or sound when asked (`modalities`), on
    # chat-format providers.
    output_modalities: list[Literal["text", "image", "audio"]] = ["text"]
    tokenizer: str = "default"
    capabilities: list[
        Literal["tools", "structured_output", "streaming", "vision", "reasoning"]
    ] = []
    data_policy: dict[str, Any] = {}
    premium: bool = False
    # Reasons when not asked to (o-series, R1): `shown` returns the reasoning,
    # `hidden` bills it only. Without it, a model reasons only when asked.
    default_reasoning: Literal["shown", "hidden"] | None = None
    # OpenRouter's `<id>:free`: a variant at no charge, on the first provider, with the
    # free tier's limits (`gateway.free_tier`).
    free_variant: bool = False
    providers: list[ModelProviderFixture] = Field(min_length=1)

    @field_validator("id")
    @classmethod
    def _vendor_slash_name(cls, value: str) -> str:
        vendor, _, name = value.partition("/")
        if not vendor or not name:
            raise ValueError("a model id has the form <vendor>/<model_name>")
        if value == AUTO or value.endswith(ROUTING_SUFFIXES):  # read as routing, not an id
            raise ValueError(
                f"{value!r} could never be asked for: `{AUTO}` and the suffixes "
                f"{', '.join(ROUTING_SUFFIXES)} are routing syntax"
            )
        return value

    @model_validator(mode="after")
    def _reasons_only_if_able(self) -> ModelFixture:
        if self.default_reasoning and "reasoning" not in self.capabilities:
            raise ValueError("default_reasoning needs the `reasoning` capability")
        return self


class PackageFixture(_Strict):
    id: str
    name: str
    amount_micros: int = Field(ge=0)
    bonus_micros: int = Field(default=0, ge=0)


class PricingFixture(_Strict):
    platform_fee_percent: float = Field(ge=0, le=100)
    minimum_charge_micros: int = Field(ge=0)
    web_search_micros_per_result: int = Field(default=4000, ge=0)
    web_fetch_micros_per_fetch: int = Field(default=1000, ge=0)
    currency: str = "USD"
    packages: list[PackageFixture] = []


class WorldFixture(_Strict):
    clock_start: str = "2026-01-01T00:00:00Z"
    default_rate_limit_rpm: int = Field(default=600, ge=1)

    @field_validator("clock_start", mode="before")
    @classmethod
    def _a_yaml_timestamp_as_text(cls, value: Any) -> Any:
        # Unquoted, YAML reads 2026-01-01T00:00:00Z as a datetime (without an offset:
        # UTC), and 2026-01-01 as a date, as models.yaml's `created` is taken.
        if isinstance(value, datetime):
            return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
        return value.isoformat() if isinstance(value, date) else value

    @field_validator("clock_start")
    @classmethod
    def _an_instant_the_clock_takes(cls, value: str) -> str:
        try:
            start = parse_iso(value)
        except ValueError:
            raise ValueError(
                f"{value!r} is not an ISO-8601 instant (e.g. 2026-01-01T00:00:00Z)"
            ) from None
        if not EARLIEST <= start < LATEST:
            raise ValueError("the clock runs from 1970-01-01 to before 9000-01-01")
        return value

    @property
    def clock_start_ts(self) -> float:
        return parse_iso(self.clock_start)


class ScriptedCallFixture(_Strict):
    """One tool call a scripted reply makes: the tool's name and its arguments."""

    name: str
    arguments: dict[str, Any] = {}

    @field_validator("name")
    @classmethod
    def _a_tool_name(cls, value: str) -> str:
        if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", value):
            raise ValueError(
                f"a tool call needs the name of a tool (1-64 letters, digits, _ or -), "
                f"not {value!r}"
            )
        return value

    @field_validator("arguments", mode="before")
    @classmethod
    def _json_object(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(
                "arguments must be a mapping of argument names to values "
                f"(e.g. {{city: Paris}}), not {type(value).__name__}"
            )
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:  # a YAML date or .nan, say
            raise ValueError(f"arguments must be plain JSON values ({exc}); quote dates") from exc
        return value


class ReplyFixture(_Strict):
    """A scripted reply: `reply` (a text answer) or `tool_calls` (tool calls), not both."""

    pattern: str
    reply: str | None = None
    tool_calls: list[ScriptedCallFixture] | None = None
    models: list[str] = []

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        compiled(value)
        return value

    @model_validator(mode="after")
    def _reply_or_calls(self) -> ReplyFixture:
        if (self.reply is None) == (self.tool_calls is None):
            given = "neither" if self.reply is None else "both"  # `reply: ""` is given
            raise ValueError(
                "a scripted reply has either `reply` (the text) or `tool_calls` "
                f"(a list of {{name, arguments}}), not {given}"
            )
        if self.tool_calls == []:
            raise ValueError("`tool_calls` needs at least one {name, arguments}")
        return self

    def stored(self) -> dict[str, Any]:
        """As the store keeps it (and `GET /_emulator/replies` shows it)."""
        return self.model_dump(exclude_none=True)


class VideoModelFixture(_Strict):
    id: str
    name: str
    description: str
    created: date = date(2025, 1, 1)
    task_types: list[Literal["text2video", "image2video", "multi-image2video"]] = Field(
        min_length=1
    )
    aspect_ratios: list[str] = Field(min_length=1)
    durations: list[PositiveInt] = Field(min_length=1)
    modes: dict[str, NonNegativeInt] = Field(min_length=1)  # micros per second of video
    sound: bool = False
    max_images: int = Field(default=1, ge=1, le=10)

    @model_validator(mode="after")
    def _room_for_several_images(self) -> VideoModelFixture:
        # multi-image2video takes 2 images or more: under 2 no request could be served,
        # and every one was told the task "takes 2 to 1 images".
        if "multi-image2video" in self.task_types and self.max_images < 2:
            raise ValueError("multi-image2video takes 2 images or more: give max_images (2-10)")
        return self


class EffectFixture(_Strict):
    scene: str
    images: Literal[1, 2]
    micros: int = Field(ge=0)


class FamilyFixture(_Strict):
    queued_s: float = Field(ge=0, allow_inf_nan=False)
    processing_s: float = Field(ge=0, allow_inf_nan=False)
    per_output_second_s: float = Field(default=0, ge=0, allow_inf_nan=False)


class ClipFixture(_Strict):
    width: int = Field(ge=2)
    height: int = Field(ge=2)
    files: dict[int, str]


# The names the code reads: a misspelt one was ignored, and its jobs were instant or its
# tasks free. Families: video/service.py's and gateway/background.py's FAMILY, and
# vidprov/service.py's `vidprov_{task_type}`; prices: vidprov/service.py's.
JobFamily = Literal[
    "background_response",
    "video_generation",
    "vidprov_effects",
    "vidprov_lipsync",
    "vidprov_multi_elements",
]
TaskPrice = Literal["lipsync_micros_per_second", "multi_elements_micros"]


class VideoFixture(_Strict):
    models: list[VideoModelFixture] = []
    effects: list[EffectFixture] = []
    tasks: dict[TaskPrice, NonNegativeInt] = {}
    families: dict[JobFamily, FamilyFixture] = {}  # one left out is instant
    clips: dict[str, ClipFixture] = {}

    @model_validator(mode="after")
    def _a_clip_for_every_output(self) -> VideoFixture:
        needed = {ratio for m in self.models for ratio in m.aspect_ratios} | (
            {"16:9"} if self.effects or self.tasks else set()  # provider tasks render 16:9
        )
        missing = sorted(r for r in needed if r not in self.clips or not self.clips[r].files)
        if missing:
            raise ValueError(f"no output clip for aspect ratio {', '.join(missing)} (clips:)")
        for model in self.models:  # a video is billed and labelled as long as it was asked
            for ratio in model.aspect_ratios:
                lacking = sorted(set(model.durations) - set(self.clips[ratio].files))
                if lacking:
                    raise ValueError(
                        f"no {ratio} clip of {', '.join(map(str, lacking))} s, which "
                        f"{model.id} offers (clips: {ratio}: files:)"
                    )
        return self


class Fixtures(_Strict):
    source: str
    world: WorldFixture
    pricing: PricingFixture
    providers: list[ProviderFixture]
    models: list[ModelFixture]
    accounts: list[AccountFixture]
    replies: list[ReplyFixture] = []
    video: VideoFixture = VideoFixture()
