"""An answer's sound sent back in a later turn.

OpenAI's clients send an earlier answer's sound back as an assistant message with
`audio: {"id": ...}` and no `content`; OpenRouter's assistant message carries the
whole `audio` (`id`, `transcript`, `data`, `expires_at`), as a client that appends
the answer it got sends it. Either way the gateway reads the turn as its transcript:
the assistant's text, counted and billed as text (the emulator hears no sound). A
message's own `content` comes first; then the `transcript` sent with it; then the
transcript of the sound the id names, which the emulator keeps, per account, until
the sound's `expires_at` (an hour, as OpenAI keeps it). An id that is unknown,
expired or another account's is refused (400 naming it), as OpenAI refuses it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from emulator.errors import InvalidRequest
from emulator.gateway.audio_output import EXPIRES_S
from emulator.gateway.canonical import AudioDelta, Delta
from emulator.store import kept_audio

if TYPE_CHECKING:
    from emulator.runtime import Runtime


def keep(rt: Runtime, account_id: str, deltas: Iterable[Delta], created: int) -> None:
    """Keep the transcripts of the sound among a stream's `deltas`, by their ids."""
    ids: dict[int, str] = {}
    said: dict[int, list[str]] = {}
    for delta in deltas:
        if isinstance(delta, AudioDelta) and not delta.ends:
            if delta.id is not None:
                ids[delta.choice] = delta.id
            said.setdefault(delta.choice, []).append(delta.transcript)
    if not ids:
        return
    transcripts = [(ids[choice], "".join(said[choice])) for choice in ids]
    with rt.store.write() as conn:
        kept_audio.keep(conn, account_id, transcripts, created + EXPIRES_S, rt.clock.now())


def read_back(rt: Runtime, account_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """The chat body with each assistant message that says nothing but its `audio`
    given the sound's transcript as its `content` (the body itself when none does)."""
    for message in body["messages"]:  # a loop, not a comprehension: this runs on every chat
        if "audio" in message:
            return _read_back(rt, account_id, body)
    return body


def _read_back(rt: Runtime, account_id: str, body: dict[str, Any]) -> dict[str, Any]:
    messages = list(body["messages"])
    silent = [i for i, m in enumerate(messages) if "audio" in m and "content" not in m]
    # Only the ids sent without a transcript are looked up (the schema: those have one).
    ids = {messages[i]["audio"]["id"] for i in silent if "transcript" not in messages[i]["audio"]}
    known: dict[str, str] = {}
    if ids:
        with rt.store.read() as conn:
            known = kept_audio.transcripts(conn, account_id, sorted(ids), rt.clock.now())
    for i in silent:
        audio = messages[i]["audio"]
        text = audio["transcript"] if "transcript" in audio else known.get(audio["id"])
        if text is None:
            raise InvalidRequest(
                f"Audio with id {audio['id']!r} was not found: an answer's sound is kept "
                "for an hour after it is made (its `expires_at`), for its own account. "
                "Send its transcript as the message's `content` instead.",
                param=f"messages[{i}].audio.id",
                code="audio_not_found",
            )
        messages[i] = {**messages[i], "content": text}
    return {**body, "messages": messages} if silent else body
