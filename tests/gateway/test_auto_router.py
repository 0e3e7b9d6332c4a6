"""OpenRouter's Auto Router (`model: "openrouter/auto"`): the gateway picks a model that
can serve the request, the same one for the same prompt, and says which in `model`."""

from __future__ import annotations

from typing import Any

import openai

from emulator.testing import Tenant
from tests.helpers import assert_error

TOOL = {
    "type": "function",
    "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}},
}
PROMPTS = [f"Question number {i} about distributed systems" for i in range(12)]


def ask(client: openai.OpenAI, prompt: str, **extra: Any) -> Any:
    return client.chat.completions.create(
        model="openrouter/auto",
        messages=[{"role": "user", "content": prompt}],
        **{"max_tokens": 8, **extra},
    )


def test_the_pick_is_a_plain_model_the_same_for_the_same_prompt(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    with tenant.client() as http:
        catalog = {m["id"]: m for m in http.get("/models").json()["data"]}
    picks = [ask(client, prompt).model for prompt in PROMPTS]
    assert picks == [ask(client, prompt).model for prompt in PROMPTS]
    assert len(set(picks)) > 3  # different prompts, different models
    for model in picks:  # never the emulator's test models, never a premium one
        assert not model.startswith("emulator/") and not catalog[model]["premium"]
    # Billed as the model picked: the same body sent to it costs the same.
    auto = ask(client, PROMPTS[0])
    direct = client.chat.completions.create(
        model=auto.model, messages=[{"role": "user", "content": PROMPTS[0]}], max_tokens=8
    )
    assert auto.usage == direct.usage
    assert auto.choices[0].message.content == direct.choices[0].message.content


def test_a_plain_question_goes_to_a_model_that_writes(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    with tenant.client() as http:
        catalog = {m["id"]: m for m in http.get("/models").json()["data"]}
    made = {m: set(catalog[m]["architecture"]["output_modalities"]) for m in catalog}
    picks = {ask(client, f"Plain question {i}").model for i in range(40)}
    assert {m for m in picks if made[m] != {"text"}} == set()
    # Asked for a picture, it picks among the models that draw.
    drawn = {
        ask(client, f"Draw a lighthouse {i}", extra_body={"modalities": ["image", "text"]}).model
        for i in range(6)
    }
    assert drawn and all("image" in made[m] for m in drawn)


def test_it_picks_only_models_that_can_serve_the_request(client: openai.OpenAI) -> None:
    for prompt in PROMPTS:
        # Room for the reasoning of the models that think unasked, then the call.
        answer = ask(client, prompt, tools=[TOOL], tool_choice="required", max_tokens=400)
        assert answer.choices[0].finish_reason == "tool_calls", answer.model


def test_allowed_models_narrow_the_pick(client: openai.OpenAI, tenant: Tenant) -> None:
    def plugin(*allowed: str) -> dict[str, Any]:
        return {"plugins": [{"id": "auto-router", "allowed_models": list(allowed)}]}

    picks = {ask(client, p, extra_body=plugin("anthropic/*")).model for p in PROMPTS}
    # Not anthropic/claude-opus-4: premium, and this account is not approved for it.
    assert picks == {"anthropic/claude-sonnet-4", "anthropic/claude-3.5-haiku"}
    pinned = {ask(client, p, extra_body=plugin("openai/gpt-4o-mini")).model for p in PROMPTS}
    assert pinned == {"openai/gpt-4o-mini"}
    # A vendor's wildcard means its models, not their free variants; `:free` asks for them.
    llamas = {ask(client, p, extra_body=plugin("meta-llama/*")).model for p in PROMPTS}
    assert llamas and not any(model.endswith(":free") for model in llamas)
    free = {ask(client, p, extra_body=plugin("meta-llama/*:free")).model for p in PROMPTS}
    assert free == {"meta-llama/llama-3.3-70b-instruct:free"}
    with tenant.client() as http:
        none = http.post(
            "/chat/completions",
            json={
                "model": "openrouter/auto",
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [TOOL],
                **plugin("deepseek/deepseek-r1"),  # it cannot use tools
            },
        )
    error = assert_error(none, 503, "no_route_available")
    assert error["param"] == "model" and "allowed_models" in error["message"]


def test_the_quote_and_the_token_count_pick_as_the_request_does(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    for prompt in PROMPTS[:4]:
        made = client.responses.create(model="openrouter/auto", input=prompt)
        with tenant.client() as http:
            quote = http.post(
                "/ai-gateway/quote", json={"model": "openrouter/auto", "input": prompt}
            ).json()
            count = http.post(
                "/responses/input_tokens", json={"model": "openrouter/auto", "input": prompt}
            ).json()
        assert quote["model"] == made.model
        assert count["provider"] == quote["provider"]


def test_a_pick_leaves_room_for_the_output_asked_for(tenant: Tenant) -> None:
    body = {
        "model": "openrouter/auto",
        "messages": [{"role": "user", "content": "a " * 125_000}],  # gpt-4o-mini holds 128,000
        "plugins": [{"id": "auto-router", "allowed_models": ["openai/gpt-4o-mini"]}],
    }
    with tenant.client() as http:
        served = http.post("/chat/completions", json={**body, "max_tokens": 8})
        none = http.post("/chat/completions", json={**body, "max_tokens": 5_000})
    assert served.status_code == 200, served.text
    assert served.json()["model"] == "openai/gpt-4o-mini"
    assert assert_error(none, 503, "no_route_available")["param"] == "model"
