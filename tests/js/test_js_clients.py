"""The official JavaScript clients against the live emulator: the `openai` Node SDK,
the Vercel `ai` SDK with `@ai-sdk/openai-compatible` and `@openrouter/ai-sdk-provider`,
OpenRouter's own `@openrouter/sdk`, and Anthropic's `@anthropic-ai/sdk` (Claude Code's)
on the Anthropic-compatible API.

Each node script (beside this file) runs a batch of checks in one process and prints
the results as JSON; the tests here hold them against what the emulator itself says
(usage events, the same request over plain HTTP). Without `node` or
`tests/js/node_modules` (`npm ci --prefix tests/js`) they are skipped, except under
CI (the `CI` environment variable), where that is a failure."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from emulator.gateway.wire.messages import signature
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import pdf_of, wav

JS_DIR = Path(__file__).parent
PDF_PAGES = ("The moon is bright tonight.", "The tide follows it.")
QUESTION = [{"role": "user", "content": "Explain how database indexes speed up queries"}]


def node_or_skip() -> str:
    node = shutil.which("node")
    missing = (
        "node is not installed"
        if node is None
        else "tests/js/node_modules is missing (run: npm ci --prefix tests/js)"
        if not (JS_DIR / "node_modules").is_dir()
        else None
    )
    if missing is None and node is not None:
        return node
    if os.environ.get("CI"):
        pytest.fail(f"the JavaScript client tests cannot run under CI: {missing}")
    pytest.skip(missing)


def run_script(script: str, tenant: Tenant, broke: Tenant, *args: str) -> dict[str, Any]:
    """Run one node script against the tenant's key; its JSON results."""
    env = {**os.environ, "EMULATOR_BROKE_KEY": broke.api_key, "AI_SDK_LOG_WARNINGS": "false"}
    env["EMULATOR_PDF"] = base64.b64encode(pdf_of(*PDF_PAGES)).decode()  # a PDF to send
    env["EMULATOR_WAV"] = wav(1.5)  # 48 tokens of audio
    done = subprocess.run(
        [node_or_skip(), script, tenant.base_url, tenant.api_key, *args],
        cwd=JS_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"{script} {' '.join(args)} failed:\n{done.stderr}"
    results: dict[str, Any] = json.loads(done.stdout)
    return results


class AiRun:
    """One run of ai_sdk.mjs: the provider, the tenant it used and its results."""

    def __init__(self, provider: str, tenant: Tenant, results: dict[str, Any]) -> None:
        self.provider = provider
        self.tenant = tenant
        self.results = results


@pytest.fixture(scope="module")
def broke(emulator: EmulatorHandle) -> Tenant:
    return emulator.create_tenant(balance_micros=0)


@pytest.fixture(scope="module")
def openai_tenant(emulator: EmulatorHandle) -> Tenant:
    return emulator.create_tenant()


@pytest.fixture(scope="module")
def node_openai(openai_tenant: Tenant, broke: Tenant) -> dict[str, Any]:
    return run_script("openai_sdk.mjs", openai_tenant, broke)


@pytest.fixture(scope="module", params=["compatible", "openrouter", "openai"])
def ai_sdk(request: pytest.FixtureRequest, emulator: EmulatorHandle, broke: Tenant) -> AiRun:
    tenant = emulator.create_tenant()
    return AiRun(request.param, tenant, run_script("ai_sdk.mjs", tenant, broke, request.param))


def usage_event(tenant: Tenant, generation_id: str) -> dict[str, Any]:
    with tenant.client() as http:
        response = http.get(f"/ai-gateway/usage/{generation_id}")
    assert response.status_code == 200, response.text
    event: dict[str, Any] = response.json()
    return event


def chat_over_http(tenant: Tenant, **body: Any) -> dict[str, Any]:
    with tenant.client() as http:
        response = http.post("/chat/completions", json={"model": "openai/gpt-4o-mini", **body})
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


# --- the openai Node SDK ---


def test_node_chat_streams_the_same_text_and_usage(
    node_openai: dict[str, Any], openai_tenant: Tenant
) -> None:
    plain, streamed = node_openai["chat"], node_openai["chat_stream"]
    helper = node_openai["chat_stream_helper"]
    expected = chat_over_http(openai_tenant, messages=QUESTION)
    assert plain["text"] == streamed["text"] == helper["text"]
    assert plain["text"] == expected["choices"][0]["message"]["content"]
    assert plain["finish_reason"] == streamed["finish_reason"] == "stop"
    assert streamed["chunks"] > 3
    tokens = ("prompt_tokens", "completion_tokens", "total_tokens")
    for answer in (plain, streamed, helper):
        event = usage_event(openai_tenant, answer["id"])
        assert {k: answer["usage"][k] for k in tokens} == {k: event[k] for k in tokens}
        assert answer["usage"]["charge_micros"] == event["charge_micros"] > 0
    assert usage_event(openai_tenant, streamed["id"])["metadata"]["stream"] is True


def test_node_tool_call_round_trip(node_openai: dict[str, Any]) -> None:
    trip = node_openai["tool_round_trip"]
    assert trip["call"]["type"] == "function" and trip["call"]["name"] == "get_weather"
    assert trip["call"]["id"].startswith("call_")
    assert set(trip["call"]["arguments"]) == {"city", "unit"}
    assert trip["answer"]["finish_reason"] == "stop"
    assert '"temperature":21' in trip["answer"]["text"]  # the tool's result, read back
    streamed = node_openai["tool_stream_helper"]
    assert streamed["finish_reason"] == "tool_calls" and streamed["name"] == "get_weather"
    assert streamed["arguments"]["unit"] in ("celsius", "fahrenheit")


def test_node_structured_output_parses_with_zod(node_openai: dict[str, Any]) -> None:
    parsed = node_openai["structured_output"]["parsed"]
    assert set(parsed) == {"title", "servings", "vegetarian", "ingredients"}
    assert isinstance(parsed["vegetarian"], bool)
    assert 1 <= parsed["servings"] <= 100  # zod's .int() bounds are not a range to draw from
    assert all(isinstance(item, str) for item in parsed["ingredients"])


def test_node_structured_output_takes_zods_patterns(node_openai: dict[str, Any]) -> None:
    """`.emoji()` and `.regex(/\\p{Lu}.../u)` are patterns of JavaScript's dialect; the
    script checked the answer with zod itself."""
    parsed = node_openai["structured_output_patterns"]["parsed"]
    assert set(parsed) == {"mood", "release", "name"}
    assert parsed["name"][0].isupper() and parsed["release"][4] == "-"


def test_node_responses_plain_and_streamed(
    node_openai: dict[str, Any], openai_tenant: Tenant
) -> None:
    plain, streamed = node_openai["responses"], node_openai["responses_stream"]
    raw = node_openai["responses_create_stream"]
    assert plain["status"] == streamed["status"] == "completed"
    assert plain["text"] == streamed["text"] == streamed["deltas"] == raw["deltas"]
    assert plain["output_types"] == ["message"]
    assert (streamed["first"], streamed["last"]) == ("response.created", "response.completed")
    for answer in (plain, streamed, raw):
        event = usage_event(openai_tenant, answer["id"])
        usage = answer["usage"]
        assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (
            event["prompt_tokens"],
            event["completion_tokens"],
            event["total_tokens"],
        )
    assert node_openai["input_tokens"]["counted"] == node_openai["input_tokens"]["used"] > 0


def test_node_background_response_polled_resumed_and_cancelled(
    node_openai: dict[str, Any],
) -> None:
    run = node_openai["responses_background"]
    assert run["polled"] == ["queued", "in_progress", "in_progress", "completed"]  # a second a poll
    assert run["text"] == run["resumed_text"] != ""
    assert (run["resumed_first"], run["resumed_last"]) == (3, "response.completed")
    assert run["cancelled"] == "cancelled"


def test_node_responses_function_call_round_trip(node_openai: dict[str, Any]) -> None:
    trip = node_openai["responses_tools"]
    assert trip["name"] == "get_weather" and set(trip["arguments"]) == {"city", "unit"}
    assert trip["answer"]["status"] == "completed"
    assert '{"temperature": 24}' in trip["answer"]["text"]


def test_node_errors_have_the_sdk_class_status_and_code(node_openai: dict[str, Any]) -> None:
    unknown = node_openai["unknown_model"]
    assert unknown["class"] == "NotFoundError" and unknown["status"] == 404
    assert unknown["code"] == "model_not_found" and "openai/gpt-4o" in unknown["message"]
    broke = node_openai["no_credits"]
    assert broke["is_api_error"] and broke["status"] == 402
    assert (broke["code"], broke["type"]) == ("insufficient_credits", "billing_error")
    cut = node_openai["stream_cut"]
    assert cut["is_api_error"] and cut["code"] == "stream_cut" and cut["chunks"] == 3


def test_node_chat_logprobs_whole_and_streamed(
    node_openai: dict[str, Any], openai_tenant: Tenant
) -> None:
    asked = node_openai["chat_logprobs"]
    entries = asked["logprobs"]["content"]
    assert "".join(entry["token"] for entry in entries) == asked["text"]
    assert all(len(entry["top_logprobs"]) == 2 for entry in entries)
    assert asked["streamed"] == entries
    expected = chat_over_http(openai_tenant, messages=QUESTION, logprobs=True, top_logprobs=2)
    assert expected["choices"][0]["logprobs"] == asked["logprobs"]


def test_node_spoken_conversation_sends_the_audio_back_by_id(
    node_openai: dict[str, Any],
) -> None:
    """The sound streams (24 kHz 16-bit: 7,200 samples a token of transcript), and the
    next turn sends it back by id, read as its transcript (the prompt grows by it)."""
    first, second = (node_openai["spoken_conversation"][k] for k in ("first", "second"))
    assert first["id"].startswith("audio_") and first["transcript"]
    details = first["usage"]["completion_tokens_details"]
    spoken = first["usage"]["completion_tokens"] - details["audio_tokens"]
    assert first["bytes"] == spoken * 7_200 * 2
    assert second["transcript"] and second["id"] != first["id"]
    transcript_tokens = second["usage"]["prompt_tokens"] - first["usage"]["prompt_tokens"]
    assert transcript_tokens > spoken  # the transcript, its framing and the new question


# --- the Vercel AI SDK, with each provider ---


def test_ai_sdk_text_and_stream_agree_with_the_emulator(
    ai_sdk: AiRun, node_openai: dict[str, Any]
) -> None:
    text, stream = ai_sdk.results["text"], ai_sdk.results["stream"]
    assert text["text"] == stream["text"] == node_openai["chat"]["text"]  # the same request
    assert text["finishReason"] == stream["finishReason"] == "stop"
    assert stream["chunks"] > 3
    for answer in (text, stream):
        event = usage_event(ai_sdk.tenant, answer["id"])
        assert answer["usage"] == {
            "inputTokens": event["prompt_tokens"],
            "outputTokens": event["completion_tokens"],
            "totalTokens": event["total_tokens"],
        }
        assert event["metadata"]["x_title"] == "AI SDK test"
        assert event["metadata"]["http_referer"] == "https://app.example.test"
    assert usage_event(ai_sdk.tenant, stream["id"])["metadata"]["stream"] is True


def test_ai_sdk_generate_object_with_a_zod_schema(ai_sdk: AiRun) -> None:
    result = ai_sdk.results["object"]
    assert result["finishReason"] == "stop" and result["usage"]["outputTokens"] > 0
    recipe = result["object"]
    assert set(recipe) == {"title", "servings", "vegetarian", "ingredients", "prep"}
    assert 1 <= recipe["servings"] <= 100 and isinstance(recipe["ingredients"], list)
    amount, unit = recipe["prep"]  # a draft-07 tuple, drawn as one
    assert isinstance(amount, int) and amount > 0 and unit in ("minutes", "hours")


def test_ai_sdk_output_object_generated_and_streamed(ai_sdk: AiRun) -> None:
    """generateText and streamText with `output: Output.object(...)` (AI SDK 6 and 7's
    form): the same request gives the same recipe, streamed as partial objects."""
    result = ai_sdk.results["output_object"]
    assert result["finishReason"] == "stop"
    assert set(result["output"]) == {"title", "servings", "vegetarian", "ingredients", "prep"}
    assert result["streamedOutput"] == result["output"] and result["partials"] > 1


def test_ai_sdk_tool_loop_calls_then_answers(ai_sdk: AiRun) -> None:
    loop = ai_sdk.results["tools"]
    assert loop["steps"] == 2 and loop["firstFinishReason"] == "tool-calls"
    [call] = loop["toolCalls"]
    assert call["name"] == "get_weather" and loop["executed"] == [call["input"]]
    assert call["input"]["city"] == "Lisbon"  # as the prompt says
    assert loop["toolResults"][0]["temperature"] == 21
    assert '"temperature":21' in loop["text"] and loop["finishReason"] == "stop"
    assert loop["totalUsage"]["totalTokens"] > 0
    streamed = ai_sdk.results["stream_tools"]
    assert streamed["finishReason"] == "tool-calls"
    assert [(c["name"], c["input"]["city"]) for c in streamed["toolCalls"]] == [
        ("get_weather", "Oslo"),
        ("get_weather", "Bergen"),
    ]
    assert streamed["usage"]["outputTokens"] > 0


def test_ai_sdk_errors(ai_sdk: AiRun) -> None:
    cut = ai_sdk.results["stream_cut"]
    assert cut["finishReason"] == "error" and "error" in cut["types"]
    assert "cut after 3 chunks" in cut["error"]
    unknown = ai_sdk.results["unknown_model"]
    assert unknown["is_api_call_error"] and unknown["statusCode"] == 404
    assert unknown["code"] == "model_not_found" and unknown["isRetryable"] is False
    broke = ai_sdk.results["no_credits"]
    assert broke["statusCode"] == 402 and broke["code"] == "insufficient_credits"
    assert broke["isRetryable"] is False


def test_ai_sdk_openrouter_reads_the_reasoning(ai_sdk: AiRun) -> None:
    got = ai_sdk.results["reasoning"]
    if ai_sdk.provider != "openrouter":  # asking for it is a setting of OpenRouter's provider
        assert got is None
        return
    assert got["text"] and got["reasoningText"] and got["reasoningTokens"] > 0
    assert got["streamedReasoningText"] == got["reasoningText"]
    event = usage_event(ai_sdk.tenant, got["id"])
    assert event["completion_tokens"] == got["outputTokens"] > got["reasoningTokens"]
    # The next turn sends the reasoning back as it came, and is answered.
    back = got["sentBack"]
    assert back["role"] == "assistant" and got["nextText"]
    assert back["reasoning_details"][0]["text"] == got["reasoningText"]
    # Anthropic's thinking, streamed, keeps its signature into the next turn.
    signed = got["signedBack"]["reasoning_details"]
    assert "".join(d.get("text", "") for d in signed) == got["signedReasoningText"]
    assert signed[-1]["signature"] == signature(got["signedReasoningText"])
    assert got["signatureWarnings"] == []


def test_ai_sdk_sends_a_pdf_the_emulator_reads(ai_sdk: AiRun) -> None:
    """Each provider's own file part (chat `file`, responses `input_file`) is read."""
    assert ai_sdk.results["pdf"] == "Read this.\n" + "\n\n".join(PDF_PAGES)


def test_ai_sdk_sends_audio_the_emulator_measures(ai_sdk: AiRun) -> None:
    """The chat providers send a WAV file part as `input_audio`, measured (1.5 s: 48
    tokens); the OpenAI provider's responses models refuse audio before sending it."""
    got = ai_sdk.results["audio"]
    if ai_sdk.provider == "openai":
        assert got == {"refused": "AI_UnsupportedFunctionalityError"}
        return
    assert got == {"text": "Transcribe.", "extraTokens": 48}


def test_ai_sdk_openai_names_stored_items_by_reference(ai_sdk: AiRun) -> None:
    got = ai_sdk.results["stored_items"]
    if ai_sdk.provider != "openai":  # only the OpenAI provider keeps answers (`store`)
        assert got is None
        return
    kinds = [item.get("type", "message") for item in got["conversationInput"]]
    assert kinds == ["message", "item_reference", "message"] and got["nextText"]
    assert got["conversationInput"][1]["id"].startswith("msg_")
    assert got["loopSteps"] == 2 and got["loopText"] and got["loopReasoning"]
    references = [item for item in got["loopInput"] if item.get("type") == "item_reference"]
    assert [ref["id"][:3] for ref in references] == ["rs_"]


def test_ai_sdk_openai_takes_its_web_search_tool(ai_sdk: AiRun) -> None:
    """`openai.tools.webSearch()`: the call is OpenAI's `web_search_call` item, which the
    provider parses as a provider-executed call (it was a parse error before)."""
    got = ai_sdk.results["web_search_tool"]
    if ai_sdk.provider != "openai":
        assert got is None
        return
    assert got["calls"] == [["web_search", True]] and got["results"] == ["web_search"]
    assert got["sources"] > 0 and got["text"]
    assert {"tool-call", "tool-result", "source"} <= set(got["streamedParts"])


def test_ai_sdk_openai_takes_the_image_generation_tool(ai_sdk: AiRun) -> None:
    """The picture is the provider-executed call's result (a WebP 256x128, as asked);
    streamed, the two partial images come first as results of the same call."""
    got = ai_sdk.results["image_tool"]
    if ai_sdk.provider != "openai":  # the tool is one of the OpenAI provider's
        assert got is None
        return
    [result] = got["results"]
    assert result["toolName"] == "image_generation" and result["providerExecuted"]
    picture = base64.b64decode(result["picture"])
    assert picture[:4] == b"RIFF" and picture[8:12] == b"WEBP"
    assert got["text"].endswith("Here is the image you asked for.")
    streamed = got["streamedResults"]
    assert [r["picture"] == result["picture"] for r in streamed] == [False, False, True]
    assert all(base64.b64decode(r["picture"])[8:12] == b"WEBP" for r in streamed)
    assert got["streamedText"] == got["text"] and got["errors"] == []
    # The next turn sends the call back by reference and the picture is edited: its
    # top colour kept (WebP is lossy, twice here: within a few levels).
    kinds = [item.get("type", "message") for item in got["editInput"]]
    assert kinds[0] == "message" and kinds[-1] == "message"
    references = [i["id"][:3] for i in got["editInput"] if i.get("type") == "item_reference"]
    assert references == ["ig_", "msg"]
    [edited] = got["editResults"]
    first, second = (
        Image.open(io.BytesIO(base64.b64decode(r["picture"]))) for r in (result, edited)
    )
    assert first.size == second.size == (256, 128) and edited["picture"] != result["picture"]
    tops = (image.convert("RGB").getpixel((128, 0)) for image in (first, second))
    assert all(abs(a - b) <= 8 for a, b in zip(*tops, strict=True))


# --- OpenRouter's own TypeScript SDK, which checks every answer with zod ---


@pytest.fixture(scope="module")
def router_tenant(emulator: EmulatorHandle) -> Tenant:
    return emulator.create_tenant()


@pytest.fixture(scope="module")
def node_openrouter(router_tenant: Tenant, broke: Tenant) -> dict[str, Any]:
    return run_script("openrouter_sdk.mjs", router_tenant, broke)


def test_openrouter_ts_sdk_takes_chat_and_responses(
    node_openrouter: dict[str, Any], router_tenant: Tenant
) -> None:
    chat, streamed = node_openrouter["chat"], node_openrouter["chatStream"]
    assert chat["text"] == streamed["text"] and chat["finish"] == "stop"
    event = usage_event(router_tenant, chat["id"])
    assert chat["cost"] == event["charge_micros"] / 1e6
    assert chat["upstream"] == event["provider_cost_micros"] / 1e6
    responses = node_openrouter["responses"]
    assert responses["status"] == "completed"
    assert responses["inputCost"] > 0 and responses["outputCost"] > 0
    # The stream's last event is typed (its usage was once refused, making it UNKNOWN).
    stream = node_openrouter["responsesStream"]
    assert stream["unknown"] == [] and stream["last"] == "response.completed"
    assert stream["cost"] > 0


def test_openrouter_ts_sdk_takes_reasoning_citations_and_cached_tokens(
    node_openrouter: dict[str, Any],
) -> None:
    assert node_openrouter["reasoning"] == {
        "anthropic": {"type": "reasoning.text", "format": "anthropic-claude-v1", "signed": True},
        "openai": {"type": "reasoning.summary", "format": "openai-responses-v1", "signed": False},
    }
    found = node_openrouter["webSearchAndCache"]
    assert found["cited"] and found["citations"] == ["url_citation"] * 5
    assert found["cached"] >= 1024


def test_openrouter_ts_sdk_takes_the_server_tools_items(node_openrouter: dict[str, Any]) -> None:
    tools = node_openrouter["serverTools"]
    kinds = ["openrouter:datetime", "openrouter:web_fetch", "message"]
    assert tools["types"] == tools["streamed"] == kinds and tools["unknown"] == 0
    assert tools["timezone"] == "Europe/Paris" and tools["datetime"][-6:] in ("+01:00", "+02:00")
    assert tools["url"] == "https://docs.example.com/release-notes" and tools["httpStatus"] == 200
    assert tools["details"] == {"toolCallsRequested": 2, "toolCallsExecuted": 2}


def test_openrouter_ts_sdk_takes_the_catalog_views(
    node_openrouter: dict[str, Any], router_tenant: Tenant
) -> None:
    with router_tenant.client() as http:
        models = http.get("/models").json()["data"]
        mini = http.get("/models/openai/gpt-4o-mini").json()
    catalog = node_openrouter["catalog"]
    assert catalog["listed"] == catalog["counted"] == len(models)
    assert catalog["one"] == "openai/gpt-4o-mini"
    assert catalog["endpoints"] == [p["name"] for p in mini["providers"]]
    assert "openai" in catalog["providers"] and "emulator" in catalog["providers"]


def test_openrouter_ts_sdk_takes_stats_and_credits(
    node_openrouter: dict[str, Any], router_tenant: Tenant
) -> None:
    stats, credits = node_openrouter["generation"], node_openrouter["credits"]
    assert stats["id"] == node_openrouter["chat"]["id"] and stats["model"] == "openai/gpt-4o-mini"
    assert credits["total"] == router_tenant.balance_micros / 1e6
    with router_tenant.client() as http:
        balance = http.get("/ai-gateway/balance").json()["balance_micros"]
    assert credits["total"] - credits["used"] == pytest.approx(balance / 1e6)


# --- Anthropic's TypeScript SDK (Claude Code's) on the Anthropic-compatible API ---


@pytest.fixture(scope="module")
def claude_tenant(emulator: EmulatorHandle) -> Tenant:
    return emulator.create_tenant()


@pytest.fixture(scope="module")
def node_anthropic(claude_tenant: Tenant, broke: Tenant) -> dict[str, Any]:
    return run_script("anthropic_sdk.mjs", claude_tenant, broke)


def test_anthropic_ts_sdk_takes_whole_and_streamed_messages(
    node_anthropic: dict[str, Any], claude_tenant: Tenant
) -> None:
    message, stream = node_anthropic["message"], node_anthropic["stream"]
    assert message["id"].startswith("msg_") and message["type"] == "message"
    assert message["stopReason"] == stream["stopReason"] == "end_turn"
    assert message["text"] == stream["text"] and message["outputTokens"] == stream["outputTokens"]
    assert stream["order"] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    event = usage_event(claude_tenant, message["generation"])
    assert event["endpoint"] == "messages" and event["charge_micros"] == message["charge"]
    assert event["prompt_tokens"] == message["inputTokens"]
    assert event["completion_tokens"] == message["outputTokens"]
    assert node_anthropic["countTokens"]["inputTokens"] == message["inputTokens"]


def test_anthropic_ts_sdk_takes_tools_stops_thinking_auth_and_errors(
    node_anthropic: dict[str, Any],
) -> None:
    tools = node_anthropic["toolRoundTrip"]
    assert tools["stopReason"] == "tool_use" and tools["city"] == "string"
    assert tools["id"].startswith("toolu_01") and len(tools["id"]) == 30
    assert tools["then"] == "end_turn" and "21 degrees" in tools["text"]
    stop = node_anthropic["stopSequence"]
    assert stop["stopReason"] == "stop_sequence" and stop["stopSequence"] == "."
    assert stop["text"] and "." not in stop["text"]
    assert node_anthropic["thinking"] == {"blocks": ["thinking", "text"], "signed": True}
    searched = node_anthropic["searchResults"]
    assert searched["same"] and searched["cited"] == [0, 1]
    assert [c["type"] for c in searched["citations"]] == ["search_result_location"] * 2
    assert searched["citations"][1]["cited_text"] == "A query planner picks an index when it helps."
    web = node_anthropic["webSearch"]
    assert web["blocks"][:2] == ["server_tool_use", "web_search_tool_result"]
    assert set(web["blocks"][2:]) == {"text"} and web["query"] == web["streamedInput"]["query"]
    assert len(web["results"]) == 5 and web["requests"] == 1 and web["same"]
    assert [c["type"] for c in web["citations"]] == ["web_search_result_location"] * len(
        web["cited"]
    )
    assert web["cited"] == [c["url"] for c in web["citations"]] and set(web["cited"]) <= set(
        web["results"]
    )
    assert web["next"] == ["server_tool_use", "web_search_tool_result"]
    fetched = node_anthropic["webFetch"]
    assert (
        fetched["blocks"][:2]
        == fetched["streamed"][:2]
        == [
            "server_tool_use",
            "web_fetch_tool_result",
        ]
    )
    assert (
        fetched["input"] == {"url": "https://docs.example.com/b-trees"} == {"url": fetched["url"]}
    )
    assert fetched["title"] == "Trees | docs.example.com" and fetched["source"] == "text"
    assert fetched["requests"] == 1 and fetched["next"] == "end_turn"
    assert node_anthropic["structuredOutput"] == {"whole": True, "streamed": True}
    assert node_anthropic["toolRunner"] == {"turns": ["tool_use", "end_turn"]}
    assert node_anthropic["xApiKey"]["stopReason"] in ("end_turn", "max_tokens")
    assert node_anthropic["errors"] == {
        "notFound": {"status": 404, "class": "NotFoundError"},
        "badRequest": {"status": 400, "class": "BadRequestError"},
        "unpaid": {"status": 402, "class": "PaymentRequiredError"},
    }
