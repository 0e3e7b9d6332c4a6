"""OpenRouter's routing preferences beyond order and sort: `data_collection`, `zdr` and
`max_price` take routes out (fallback models included); none left is 503
`no_route_available` naming the preference that took the last ones. Also OpenRouter's
sort object (`by`, `partition`), `models` without `model`, and chat's `prompt`."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

HELLO = [{"role": "user", "content": "hello"}]


def served(client: openai.OpenAI, model: str, **body: Any) -> tuple[str, str]:
    """(model, provider) of the route that served the request."""
    answer = client.chat.completions.create(model=model, messages=HELLO, extra_body=body)  # type: ignore[arg-type]
    return answer.model, (answer.model_extra or {})["provider"]


def refused(tenant: Tenant, model: str, **body: Any) -> dict[str, Any]:
    with tenant.client() as http:
        answer = http.post("/chat/completions", json={"model": model, "messages": HELLO, **body})
    assert answer.headers["x-should-retry"] == "false"
    return assert_error(answer, 503, "no_route_available")


def test_data_collection_deny_skips_models_that_train_on_prompts(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    deny = {"data_collection": "deny"}
    assert served(client, "deepseek/deepseek-chat-v3")[0] == "deepseek/deepseek-chat-v3"
    fallback = served(client, "deepseek/deepseek-chat-v3", models=["openai/gpt-4o"], provider=deny)
    assert fallback == ("openai/gpt-4o", "openai")
    error = refused(tenant, "deepseek/deepseek-chat-v3", provider=deny)
    assert error["param"] == "provider.data_collection" and "training" in error["message"]
    allow = {"data_collection": "allow"}
    assert served(client, "deepseek/deepseek-chat-v3", provider=allow)[1] == "deepseek"


def test_nitro_and_floor_variants_sort_by_throughput_and_price(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    """OpenRouter's `:nitro` is `provider.sort: throughput`, `:floor` is `price`, per
    model: a fallback's variant sorts its own providers; a `provider.sort` sent wins."""
    chat_v3 = "deepseek/deepseek-chat-v3"  # deepseek is cheapest, fireworks fastest
    assert served(client, chat_v3) == (chat_v3, "deepseek")
    assert served(client, f"{chat_v3}:nitro") == (chat_v3, "fireworks")
    assert served(client, f"{chat_v3}:floor") == (chat_v3, "deepseek")
    assert served(client, f"{chat_v3}:exacto") == (chat_v3, "deepseek")  # the catalog's order
    sorted_by_price = served(client, f"{chat_v3}:nitro", provider={"sort": "price"})
    assert sorted_by_price == (chat_v3, "deepseek")
    fallen = served(client, "emulator/fail-503", models=[f"{chat_v3}:nitro"])
    assert fallen == (chat_v3, "fireworks")
    with tenant.client() as http:
        quote = http.post(
            "/ai-gateway/quote", json={"model": f"{chat_v3}:nitro", "messages": HELLO}
        ).json()
        unknown = http.post(
            "/chat/completions", json={"model": f"{chat_v3}:turbo", "messages": HELLO}
        )
    assert quote["provider"] == "fireworks"
    assert f"Did you mean {chat_v3}," in assert_error(unknown, 404, "model_not_found")["message"]


def test_a_variant_not_emulated_suggests_its_model_first(tenant: Tenant) -> None:
    """`openai/gpt-4o:thinking`: the closest ids by spelling put `openai/gpt-4o-mini`
    first; the model the variant is of comes first."""
    with tenant.client() as http:
        answer = http.post(
            "/chat/completions", json={"model": "openai/gpt-4o:thinking", "messages": HELLO}
        )
    message = assert_error(answer, 404, "model_not_found")["message"]
    assert "Did you mean openai/gpt-4o, openai/gpt-4o-mini" in message


def test_zdr_keeps_to_zero_data_retention(client: openai.OpenAI, tenant: Tenant) -> None:
    zdr = {"zdr": True}
    assert served(client, "anthropic/claude-sonnet-4", provider=zdr)[1] == "anthropic"
    fallback = served(client, "openai/gpt-4o", models=["anthropic/claude-sonnet-4"], provider=zdr)
    assert fallback == ("anthropic/claude-sonnet-4", "anthropic")
    assert refused(tenant, "openai/gpt-4o", provider=zdr)["param"] == "provider.zdr"
    # The filter that took the last route is named: `only` left one, zdr took it.
    both = {"only": ["azure"], "zdr": True}
    assert refused(tenant, "openai/gpt-4o", provider=both)["param"] == "provider.zdr"
    assert refused(tenant, "openai/gpt-4o", provider={"only": ["x"], "zdr": True})["param"] == (
        "provider"
    )


def test_max_price_skips_routes_above_it(client: openai.OpenAI, tenant: Tenant) -> None:
    # gpt-4o-mini: openai at 0.15 / 0.60 USD per million tokens, azure at 0.165 / 0.66
    assert served(client, "openai/gpt-4o-mini", provider={"order": ["azure"]})[1] == "azure"
    cheap = {"order": ["azure"], "max_price": {"completion": 0.62}}
    assert served(client, "openai/gpt-4o-mini", provider=cheap)[1] == "openai"
    as_text = {"order": ["azure"], "max_price": {"completion": "0.62"}}  # as the SDK sends it
    assert served(client, "openai/gpt-4o-mini", provider=as_text)[1] == "openai"
    under = {"max_price": {"prompt": 0.15, "completion": 0.6}}  # the limits are inclusive
    assert served(client, "openai/gpt-4o-mini", provider=under)[1] == "openai"
    error = refused(tenant, "openai/gpt-4o-mini", provider={"max_price": {"prompt": 0.1}})
    assert error["param"] == "provider.max_price" and "max_price" in error["message"]


def test_the_quote_routes_as_the_request_would(tenant: Tenant) -> None:
    body = {"endpoint": "chat.completions", "model": "openai/gpt-4o", "messages": HELLO}
    with tenant.client() as http:
        fallback = {"models": ["anthropic/claude-sonnet-4"], "provider": {"zdr": True}}
        quote = http.post("/ai-gateway/quote", json={**body, **fallback})
        assert quote.status_code == 200, quote.text
        assert quote.json()["model"] == "anthropic/claude-sonnet-4"
        none = http.post("/ai-gateway/quote", json={**body, "provider": {"zdr": True}})
    assert assert_error(none, 503, "no_route_available")["param"] == "provider.zdr"


@pytest.mark.parametrize(
    ("provider", "param"),
    [
        ({"data_collection": "sometimes"}, "provider.data_collection"),
        ({"zdr": "yes"}, "provider.zdr"),
        ({"max_price": {"prompt": -1}}, "provider.max_price.prompt"),
        ({"max_price": 3}, "provider.max_price"),
        ({"max_price": {"completion": "cheap"}}, "provider.max_price.completion"),
        ({"require_parameters": "always"}, "provider.require_parameters"),
    ],
)
def test_malformed_preferences_are_400(
    tenant: Tenant, provider: dict[str, Any], param: str
) -> None:
    with tenant.client() as http:
        answer = http.post(
            "/chat/completions",
            json={"model": "openai/gpt-4o", "messages": HELLO, "provider": provider},
        )
    assert assert_error(answer, 400, "invalid_request")["param"] == param


def test_sort_as_an_object_and_its_partition(client: openai.OpenAI, tenant: Tenant) -> None:
    """`sort: {"by", "partition"}`: by model (the default) a fallback stays a fallback;
    `partition: "none"` sorts every model's routes together."""
    gpt4o, llama = "openai/gpt-4o", "meta-llama/llama-3.3-70b-instruct"
    by_model = {"sort": {"by": "price"}}
    assert served(client, gpt4o, models=[llama], provider=by_model)[0] == gpt4o
    across = {"sort": {"by": "price", "partition": "none"}}
    assert served(client, gpt4o, models=[llama], provider=across) == (llama, "groq")
    assert served(client, gpt4o, models=[llama], provider={"sort": {"partition": "none"}}) == (
        gpt4o,
        "openai",
    )  # no `by`: nothing to sort by, the catalog's order
    # `exacto` (OpenRouter's providers of the best tool calling): the catalog's order.
    chat_v3 = "deepseek/deepseek-chat-v3"
    assert served(client, chat_v3, provider={"sort": "exacto"}) == (chat_v3, "deepseek")
    with tenant.client() as http:
        quote = http.post(
            "/ai-gateway/quote",
            json={"model": gpt4o, "models": [llama], "messages": HELLO, "provider": across},
        ).json()
        bad = http.post(
            "/chat/completions",
            json={"model": gpt4o, "messages": HELLO, "provider": {"sort": {"by": "vibes"}}},
        )
    assert (quote["model"], quote["provider"]) == (llama, "groq")
    assert assert_error(bad, 400, "invalid_request")["param"] == "provider.sort.by"


def test_sort_by_price_adds_the_prompt_and_completion_prices(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    """`price` is a route's prompt plus completion price, not either alone. Across
    models (`partition: "none"`), deepseek-r1 on deepseek (0.55 + 2.19 USD per million
    tokens) has the cheaper prompt, and llama-3.3 on together (0.88 + 0.88) the cheaper
    whole: llama-3.3 on together is tried first. Within one model the fixtures' prices
    never set the prompt's order against the whole's."""
    r1, llama = "deepseek/deepseek-r1", "meta-llama/llama-3.3-70b-instruct"
    body = {
        "models": [llama],
        "provider": {
            "only": ["deepseek", "together"],  # not groq: cheaper in both
            "sort": {"by": "price", "partition": "none"},
        },
    }
    assert served(client, r1, **body) == (llama, "together")
    with tenant.client() as http:
        quote = http.post("/ai-gateway/quote", json={"model": r1, "messages": HELLO, **body})
    assert (quote.json()["model"], quote.json()["provider"]) == (llama, "together")
    # Sorted by model (the default), r1's own cheapest route comes first.
    by_model = {**body, "provider": {**body["provider"], "sort": "price"}}
    assert served(client, r1, **by_model) == (r1, "deepseek")


def test_models_without_model_are_served_by_the_first(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    """OpenRouter's: `models` alone, the first serves and the rest are its fallbacks."""
    with tenant.client() as http:
        fallen = http.post(
            "/chat/completions",
            json={"models": ["emulator/fail-503", "emulator/echo"], "messages": HELLO},
        )
        response = http.post("/responses", json={"models": ["emulator/echo"], "input": "hi"})
        quote = http.post("/ai-gateway/quote", json={"models": ["emulator/echo"], "input": "hi"})
        neither = http.post("/chat/completions", json={"messages": HELLO})
    assert fallen.status_code == 200 and fallen.json()["model"] == "emulator/echo"
    with tenant.client() as http:  # errors name the item of `models` at fault
        for models, status, param in (
            (["openai/gpt-4o", "nope/x"], 404, "models[1]"),
            (["openai/gpt-4o", 5], 400, "models[1]"),
            ([""], 400, "models[0]"),
            ([7], 400, "models[0]"),
        ):
            bad = http.post("/chat/completions", json={"models": models, "messages": HELLO})
            assert bad.status_code == status and bad.json()["error"]["param"] == param, models
    attempts = [a["model"] for a in _attempts(tenant, fallen)]
    assert attempts == ["emulator/fail-503", "emulator/echo"]
    assert response.json()["output_text"] == "hi"
    assert quote.status_code == 200 and quote.json()["model"] == "emulator/echo"
    assert assert_error(neither, 400, "invalid_request")["param"] == "model"


def _attempts(tenant: Tenant, answer: Any) -> list[dict[str, Any]]:
    with tenant.client() as http:
        event = http.get(f"/ai-gateway/usage/{answer.headers['x-generation-id']}").json()
    return event["route_attempts"]


def test_a_prompt_string_stands_for_one_user_message(tenant: Tenant) -> None:
    """OpenRouter's chat takes `prompt` in place of `messages`."""
    with tenant.client() as http:
        answer = http.post("/chat/completions", json={"model": "emulator/echo", "prompt": "ping"})
        as_messages = http.post(
            "/chat/completions",
            json={"model": "emulator/echo", "messages": [{"role": "user", "content": "ping"}]},
        )
        quote = http.post("/ai-gateway/quote", json={"model": "emulator/echo", "prompt": "ping"})
        both = http.post(
            "/chat/completions", json={"model": "emulator/echo", "prompt": "a", "messages": HELLO}
        )
        empty = http.post("/chat/completions", json={"model": "emulator/echo", "prompt": ""})
    assert answer.status_code == 200, answer.text
    assert answer.json()["choices"][0]["message"]["content"] == "ping"
    assert answer.json()["usage"] == as_messages.json()["usage"]
    assert quote.json()["endpoint"] == "chat.completions"
    assert quote.json()["estimated_input_tokens"] == answer.json()["usage"]["prompt_tokens"]
    for refused_body in (both, empty):
        assert assert_error(refused_body, 400, "invalid_request")["param"] == "prompt"


def test_providers_are_named_by_slug_or_display_name_in_any_case(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    """As OpenRouter takes them: `"Azure"`, `"OPENAI"`, `"Amazon Bedrock"` or
    `"amazon-bedrock"` for the emulated providers `azure`, `openai`, `bedrock`."""
    gpt4o, sonnet = "openai/gpt-4o", "anthropic/claude-sonnet-4"
    assert served(client, gpt4o, provider={"only": ["Azure"]}) == (gpt4o, "azure")
    listed = {"only": ["Azure (emulated)"]}  # the name GET /models shows
    assert served(client, gpt4o, provider=listed) == (gpt4o, "azure")
    assert served(client, gpt4o, provider={"ignore": ["OPENAI"]}) == (gpt4o, "azure")
    assert served(client, gpt4o, provider={"order": ["Azure", "OpenAI"]}) == (gpt4o, "azure")
    for bedrock in ("Amazon Bedrock", "amazon-bedrock", "Bedrock"):
        assert served(client, sonnet, provider={"order": [bedrock]}) == (sonnet, "bedrock")
    error = refused(tenant, gpt4o, provider={"only": ["Not A Provider"]})
    assert error["param"] == "provider"


def test_a_slug_wins_over_another_providers_display_name() -> None:
    """A provider whose display name is another's slug does not take that slug."""
    from types import SimpleNamespace

    from emulator.gateway.routing import ProviderPrefs, _by_slug

    def row(shown: str) -> SimpleNamespace:
        return SimpleNamespace(body={"display_name": shown})

    view = SimpleNamespace(
        providers={"together": row("Together (emulated)"), "together-lite": row("Together")}
    )
    assert _by_slug(view, ProviderPrefs(only=("together",))).only == ("together",)  # type: ignore[arg-type]
    assert _by_slug(view, ProviderPrefs(only=("TOGETHER",))).only == ("together",)  # type: ignore[arg-type]


def test_a_model_and_its_variant_try_each_route_once(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {"model": "openai/gpt-4o", "models": ["openai/gpt-4o:nitro"], "messages": HELLO}
    down = emulator.providers
    with down.down("openai"), down.down("azure"), tenant.client() as http:
        answer = http.post("/chat/completions", json=body)
    assert answer.status_code == 503
    tried = [(a["model"], a["provider"]) for a in _attempts(tenant, answer)]
    assert sorted(tried) == [("openai/gpt-4o", "azure"), ("openai/gpt-4o", "openai")]


def test_a_video_model_among_the_fallbacks_is_named_by_its_place(tenant: Tenant) -> None:
    body = {"model": "emulator/echo", "models": ["openai/gpt-4o", "vidprov/v1.6"]}
    with tenant.client() as http:
        answer = http.post("/chat/completions", json=body | {"messages": HELLO})
    assert assert_error(answer, 400, "unsupported_model")["param"] == "models[1]"
