"""Wire models of the catalog and pricing, for the OpenAPI document.

The handlers send pre-encoded bytes built by `catalog.py`; these models
describe those bytes field by field, and a test checks they agree.
"""

from __future__ import annotations

from typing import Any, Literal

from emulator.bodies import WireModel


class ProviderPricing(WireModel):
    prompt: str
    completion: str
    image: str
    request: str
    prompt_micros_per_mtok: int
    completion_micros_per_mtok: int
    image_micros: int
    request_micros: int
    # Only on routes that cache prompts (USD per token, and micros per million tokens).
    input_cache_read: str | None = None
    input_cache_write: str | None = None
    cache_read_micros_per_mtok: int | None = None
    cache_write_micros_per_mtok: int | None = None
    # Only on routes of models that generate images: their output tokens' price.
    image_output: str | None = None
    image_output_micros_per_mtok: int | None = None
    # Only on routes of models that speak: their sound's output tokens' price.
    audio_output: str | None = None
    audio_output_micros_per_mtok: int | None = None
    # Only on routes of models that price heard audio apart: its prompt tokens' price.
    audio: str | None = None
    audio_input_micros_per_mtok: int | None = None


class ModelProvider(WireModel):
    name: str
    display_name: str
    wire_format: Literal["chat", "responses", "messages"]
    status: Literal["up", "down", "slow"]
    context_length: int
    max_output_tokens: int
    latency_ms: int
    throughput_tps: int
    pricing: ProviderPricing


class Architecture(WireModel):
    modality: str
    input_modalities: list[str]
    output_modalities: list[str]
    tokenizer: str  # "Other" for a model without text tokens (video), as OpenRouter


class Capabilities(WireModel):
    tools: bool
    structured_output: bool
    streaming: bool
    vision: bool
    reasoning: bool


class TopProvider(ModelProvider):
    is_moderated: bool
    max_completion_tokens: int


class VideoTopProvider(WireModel):
    """A video model's provider: it serves `POST /generate/video`, not gateway routes."""

    name: str
    is_moderated: bool
    modality: Literal["video"]  # required: a text model's top provider never passes for it


class VideoMode(WireModel):
    mode: str
    micros_per_second: int
    usd_per_second: str


class VideoOptions(WireModel):
    """What `POST /generate/video` accepts for a video model, and what it costs."""

    endpoint: str
    task_types: list[str]
    aspect_ratios: list[str]
    durations: list[str]
    modes: list[VideoMode]
    sound: bool
    max_images: int


class ModelLinks(WireModel):
    details: str


class ModelEndpoints(WireModel):
    """OpenRouter's `GET /models/{id}/endpoints`: the model and its endpoints, as `data`."""

    data: dict[str, Any]


class ModelOut(WireModel):
    id: str
    canonical_slug: str
    object: Literal["model"]
    created: int
    type: Literal["model"]  # Anthropic's: type, display_name, created_at (RFC 3339)
    display_name: str
    created_at: str
    lifecycle: Literal["active"]
    max_input_tokens: int | None  # Anthropic's names for the two below
    max_tokens: int | None
    owned_by: str
    vendor: str
    name: str
    description: str
    context_length: int | None  # None for video models
    max_output_tokens: int | None
    modality: Literal["text", "image", "video", "audio"]
    architecture: Architecture
    pricing: ProviderPricing | None
    capabilities: Capabilities
    supported_parameters: list[str]
    data_policy: dict[str, Any]
    premium: bool
    # Reasoning done unasked: `shown` returned, `hidden` billed only (an addition).
    default_reasoning: Literal["shown", "hidden"] | None
    top_provider: TopProvider | VideoTopProvider | None
    providers: list[ModelProvider]  # the gateway's routes (none for video models)
    default_parameters: dict[str, Any]
    per_request_limits: dict[str, Any] | None
    supported_voices: list[str] | None
    links: ModelLinks
    emulated: bool
    video: VideoOptions | None = None  # video models only


class ListLinks(WireModel):
    next: str | None


class ModelList(WireModel):
    object: Literal["list"]
    data: list[ModelOut]
    has_more: bool
    next_cursor: str | None
    total_count: int
    links: ListLinks
    first_id: str | None  # Anthropic's page bounds: its SDKs send `after_id=<last_id>`
    last_id: str | None


class Package(WireModel):
    id: str
    name: str
    amount_micros: int
    bonus_micros: int
    amount_usd: str
    credited_micros: int


class ProviderPrice(ProviderPricing):
    name: str


class ModelPrice(ProviderPricing):
    id: str
    modality: str
    provider: str | None
    providers: list[ProviderPrice]
    video_modes: list[VideoMode] | None  # video models: the price per second of each mode


class Pricing(WireModel):
    object: Literal["pricing"]
    currency: str
    platform_fee_percent: float
    minimum_charge_micros: int
    minimum_charge_usd: str
    web_search_micros_per_result: int  # each web search result (`plugins: [{"id": "web"}]`)
    web_fetch_micros_per_fetch: int  # each page `openrouter:web_fetch` read (Exa's engine)
    packages: list[Package]
    models: list[ModelPrice]
