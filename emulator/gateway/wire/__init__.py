"""The three wire formats, each translated to and from `gateway.canonical`.

Each module reads and writes one format, requests and answers, whole and
streamed: `chat` (chat completions), `responses`, and `messages` (content
blocks, `stop_reason`); the responses format's stream events live apart, in
`responses_events` (`providers.EVENTS` names each format's). The gateway
speaks the client's format on one side and the provider's on the other, and
only canonical types cross between.
"""
