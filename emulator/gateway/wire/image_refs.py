"""Images in a message as the client sent them (`Message.pictures`): read from any
format's image parts, and handed on to a provider in its own, so that an image model
edits the image itself (`gateway.image_sources`)."""

from __future__ import annotations

from typing import Any

from emulator.gateway.canonical import Message


def picture_of(part: dict[str, Any]) -> str:
    """An image part's image as sent: chat's `image_url.url`, a responses `input_image`'s
    `image_url` (or `file:` its `file_id`), a messages `image` block's data URL or URL."""
    url = part.get("image_url")
    if isinstance(url, dict):
        return str(url.get("url") or "")
    if url:
        return str(url)
    if part.get("file_id"):
        return f"file:{part['file_id']}"
    source = part.get("source") or {}
    if source.get("type") == "base64":
        return f"data:{source.get('media_type')};base64,{source.get('data')}"
    if source.get("type") == "file":
        return f"file:{source.get('file_id')}"
    return str(source.get("url") or "")


def pictures_of(m: Message) -> tuple[str, ...]:
    """A message's images as sent, to hand on to a provider (an image model edits the
    last); an empty PNG data URL for each the message counts without them."""
    return m.pictures or ("data:image/png;base64,",) * m.images
