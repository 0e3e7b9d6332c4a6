"""The three wire formats, each translated to and from `gateway.canonical`.

Each module reads and writes one format, requests and answers, whole and
streamed: `chat` (chat completions), `responses`, and `messages` (content
blocks, `stop_reason`); each format's stream lives apart, in `chat_chunks`,
`responses_events` and `messages_events` (`providers.EVENTS` names each format's). The gateway
speaks the client's format on one side and the provider's on the other, and
only canonical types cross between.
"""

# What each format's own answer calls a finish (OpenRouter's `native_finish_reason`):
# a messages provider's `stop_reason`, a responses provider's status (or why it is
# incomplete); a chat provider's is the finish reason itself.
NATIVE_FINISH: dict[str, dict[str, str]] = {
    "chat": {},
    "messages": {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"},
    "responses": {"stop": "completed", "tool_calls": "completed", "length": "max_output_tokens"},
}


def native_finish(
    wire_format: str, reason: str | None, stop_sequence: str | None = None
) -> str | None:
    """The serving provider's own word for a finish reason: a messages provider that
    stopped at one of the request's stop sequences says `stop_sequence`."""
    if reason is None:
        return None
    if stop_sequence is not None and wire_format == "messages":
        return "stop_sequence"
    return NATIVE_FINISH.get(wire_format, {}).get(reason, reason)
