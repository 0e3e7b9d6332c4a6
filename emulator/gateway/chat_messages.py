"""A chat-completions message as clients send it: its role, its content parts
(text, images, audio, files) and what an earlier answer sent back carries."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from emulator.bodies import OpenWireModel, WireModel
from emulator.gateway import audio, files, images


class FunctionCall(OpenWireModel):
    name: str
    arguments: str = ""


class ToolCallIn(OpenWireModel):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ImageUrl(OpenWireModel):
    url: Annotated[str, Field(min_length=1)]
    detail: Literal["auto", "low", "high"] | None = None

    @field_validator("url")
    @classmethod
    def _an_image(cls, url: str) -> str:
        images.check_image_url(url)
        return url


class InputAudio(OpenWireModel):
    """An `input_audio` part's audio: its `format` (`wav`, `mp3`, ...; which formats a
    provider takes varies, so any is taken) and base64 `data` of that format, measured
    (`gateway.audio`), not heard."""

    format: Annotated[str, Field(min_length=1)]  # first: the data's check reads it
    data: Annotated[str, Field(min_length=1)]

    @field_validator("data")
    @classmethod
    def _audio(cls, data: str, info: ValidationInfo) -> str:
        if images.decode_base64(data) is None:
            raise ValueError("`input_audio.data` must be base64-encoded audio")
        if "format" in info.data:
            audio.length_ms(data, info.data["format"].lower())
        return data


class CacheControl(WireModel):
    """A prompt-cache breakpoint (`gateway.prompt_cache`), as Anthropic's API takes it."""

    type: Literal["ephemeral"]
    ttl: Literal["5m", "1h"] | None = None


def _readable(data: str) -> str:
    files.check_file_data(data)
    return data


# A file's data as chat and responses parts send it: an http(s) URL or a data URL.
FileData = Annotated[str, AfterValidator(_readable)]


class FileRef(OpenWireModel):
    """A `file` part's file: its data (read, `gateway.files`) or an uploaded file's id."""

    file_data: FileData | None = None
    file_id: str | None = None
    filename: str | None = None

    @model_validator(mode="after")
    def _has_a_file(self) -> FileRef:
        if self.file_data is None and self.file_id is None:
            raise ValueError("a `file` part's `file` needs `file_data` or `file_id`")
        return self


class ContentPart(OpenWireModel):
    type: Literal["text", "image_url", "input_audio", "file", "refusal"]
    text: str | None = None
    image_url: ImageUrl | None = None
    file: FileRef | None = None
    input_audio: InputAudio | None = None
    cache_control: CacheControl | None = None

    @model_validator(mode="after")
    def _has_its_payload(self) -> ContentPart:
        if self.type == "text" and self.text is None:
            raise ValueError("a `text` part needs `text`")
        if self.type == "image_url" and self.image_url is None:
            raise ValueError('an `image_url` part needs `image_url` ({"url": ...})')
        if self.type == "file" and self.file is None:
            raise ValueError('a `file` part needs `file` ({"file_data": ...} or {"file_id": ...})')
        if self.type == "input_audio" and self.input_audio is None:
            raise ValueError(
                'an `input_audio` part needs `input_audio` ({"data": base64, "format": "wav"})'
            )
        return self


class SentBackAudio(OpenWireModel):
    """An earlier answer's sound on an assistant message: OpenAI's reference
    (`{"id": ...}`), or the whole `audio` of OpenRouter's assistant message
    (`gateway.kept_audio` reads it back as its transcript)."""

    id: Annotated[str, Field(min_length=1)] | None = None
    transcript: str | None = None
    data: str | None = None
    expires_at: int | None = None


class SentBackImage(OpenWireModel):
    """An image of an earlier answer's `message.images` (OpenRouter's), sent back: the
    openrouter SDK sends its `image_url` alone."""

    type: Literal["image_url"] | None = None
    image_url: ImageUrl


class ChatMessage(OpenWireModel):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | Annotated[list[ContentPart], Field(min_length=1)] | None = None
    name: str | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None
    audio: SentBackAudio | None = None
    images: list[SentBackImage] | None = None

    @model_validator(mode="after")
    def _says_something(self) -> ChatMessage:
        if self.images is not None and self.role != "assistant":
            raise ValueError(
                "only an assistant message carries `images` (an earlier answer's); send a "
                "user's image as an `image_url` content part"
            )
        # An assistant's earlier sound stands for its content (`gateway.kept_audio`).
        if self.audio is not None:
            if self.role != "assistant":
                raise ValueError(
                    "only an assistant message carries `audio` (an earlier answer's "
                    "sound); send a user's sound as an `input_audio` content part"
                )
            if self.audio.id is None and self.audio.transcript is None:
                raise ValueError("`audio` needs the `id` of an earlier answer's sound")
            return self
        # Only an assistant message that calls tools or shows images may go without content.
        if self.content is None and not (
            self.role == "assistant" and (self.tool_calls or self.images)
        ):
            article = "an" if self.role == "assistant" else "a"
            raise ValueError(f"{article} `{self.role}` message needs `content`")
        return self
