"""OpenRouter's routing preferences beyond order and sort: `data_collection`, `zdr` and
`max_price` take routes out (fallback models included); none left is 503
`no_route_available` naming the preference that took the last ones."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from emulator.testing import Tenant
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
    assert chat_v3 in assert_error(unknown, 404, "model_not_found")["message"]


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
