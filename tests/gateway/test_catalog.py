"""GET /models, /models/{id} and /ai-gateway/pricing: the catalog from the fixtures."""

from __future__ import annotations

import httpx
import openai
import pytest

from emulator.gateway.schemas import ModelList, Pricing
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

MAGIC = {
    "emulator/echo",
    "emulator/fail-503",
    "emulator/flaky",
    "emulator/slow",
    "emulator/premium",
}


@pytest.fixture
def api(demo: EmulatorHandle) -> httpx.Client:
    with httpx.Client(base_url=demo.base_url) as client:
        yield client  # type: ignore[misc]


def test_catalog_has_a_dozen_models_of_five_vendors_plus_the_magic_ones(api: httpx.Client) -> None:
    body = api.get("/models").json()
    assert body["object"] == "list" and body["has_more"] is False and body["next_cursor"] is None
    ids = [m["id"] for m in body["data"]]
    real = [i for i in ids if not i.startswith("emulator/")]
    assert len(real) >= 12
    assert len({i.split("/")[0] for i in real}) >= 5
    assert set(ids) >= MAGIC
    assert all(len(i.split("/")) == 2 and all(i.split("/")) for i in ids)


def test_every_model_has_the_documented_fields(api: httpx.Client) -> None:
    body = api.get("/models").json()
    ModelList.model_validate(body)  # the OpenAPI schema describes the bytes exactly
    for model in body["data"]:
        if model["modality"] == "video":
            continue  # below
        assert model["name"] and model["description"] and model["context_length"] > 0
        assert set(model["capabilities"]) == {
            "tools",
            "structured_output",
            "streaming",
            "vision",
            "reasoning",
        }
        assert "zero_data_retention" in model["data_policy"]
        assert 1 <= len(model["providers"]) <= 3
        for provider in model["providers"]:
            assert provider["wire_format"] in {"chat", "responses", "messages"}
            assert provider["status"] == "up"
            assert float(provider["pricing"]["prompt"]) >= 0
        # The customer-visible price is the default (first) provider's.
        assert model["pricing"] == model["providers"][0]["pricing"]
        if model["default_reasoning"] is not None:  # reasons unasked: it can reason
            assert model["capabilities"]["reasoning"]
    reasons = {m["id"]: m["default_reasoning"] for m in body["data"]}
    assert reasons["openai/o4-mini"] == "hidden" and reasons["deepseek/deepseek-r1"] == "shown"
    assert reasons["anthropic/claude-sonnet-4"] is None  # only when asked


def test_prices_are_per_token_usd_strings_and_micros_per_million(api: httpx.Client) -> None:
    model = api.get("/models/openai/gpt-4o-mini").json()
    assert model["pricing"]["prompt"] == "0.00000015"
    assert model["pricing"]["completion"] == "0.0000006"
    assert model["pricing"]["prompt_micros_per_mtok"] == 150_000
    assert model["pricing"]["image"] == "0.000217"
    azure = next(p for p in model["providers"] if p["name"] == "azure")
    assert azure["pricing"]["prompt_micros_per_mtok"] == 165_000  # its own price
    assert {p["wire_format"] for p in model["providers"]} == {"responses", "chat"}


def test_video_models_are_listed_with_what_generate_video_accepts(api: httpx.Client) -> None:
    models = api.get("/models").json()["data"]
    video = {m["id"]: m for m in models if m["modality"] == "video"}
    assert set(video) == {"vidprov/v2-master", "vidprov/v1.6", "emulator/video"}
    master = video["vidprov/v2-master"]
    assert master["providers"] == [] and master["context_length"] is None
    assert master["architecture"]["output_modalities"] == ["video"]
    assert master["video"] == {
        "endpoint": "/api/v1/generate/video",
        "task_types": ["text2video", "image2video"],
        "aspect_ratios": ["16:9", "9:16", "1:1"],
        "durations": ["5s", "10s"],
        "modes": [
            {"mode": "standard", "micros_per_second": 60000, "usd_per_second": "0.06"},
            {"mode": "pro", "micros_per_second": 110000, "usd_per_second": "0.11"},
        ],
        "sound": False,
        "max_images": 1,
    }
    assert api.get("/models/vidprov/v1.6").json()["video"]["max_images"] == 4
    # Text models come first, as before: a client that pages sees them unchanged.
    kinds = [m["modality"] for m in models]
    assert kinds == sorted(kinds, key=lambda kind: kind != "text")
    prices = {m["id"]: m for m in api.get("/ai-gateway/pricing").json()["models"]}
    assert prices["emulator/video"]["video_modes"][0]["micros_per_second"] == 1000
    assert prices["openai/gpt-4o"]["video_modes"] is None


def test_video_model_price_is_what_a_generation_costs(api: httpx.Client) -> None:
    mode = api.get("/models/emulator/video").json()["video"]["modes"][1]  # pro
    body = {"model": "emulator/video", "task_type": "text2video", "prompt": "a price check"}
    made = api.post(
        "/generate/video",
        json=body | {"duration": "10s", "mode": mode["mode"]},
        headers={"Authorization": "Bearer sk-emu-demo-video"},
    )
    assert made.status_code == 200, made.text
    assert made.json()["charge_micros"] == 10 * mode["micros_per_second"]


@pytest.mark.parametrize("path", ["/chat/completions", "/ai-gateway/quote"])
def test_gateway_routes_refuse_a_video_model(api: httpx.Client, path: str) -> None:
    body = {"model": "vidprov/v1.6", "messages": [{"role": "user", "content": "hi"}]}
    if path.endswith("quote"):
        body = {"endpoint": "responses", "model": "vidprov/v1.6", "input": "hi"}
    response = api.post(path, json=body, headers={"Authorization": "Bearer sk-emu-demo-all"})
    error = assert_error(response, 400, "unsupported_model")
    assert "generate/video" in error["message"] and error["param"] == "model"


def test_all_three_wire_formats_are_served(api: httpx.Client) -> None:
    formats = {p["wire_format"] for m in api.get("/models").json()["data"] for p in m["providers"]}
    assert formats == {"chat", "responses", "messages"}


def test_unknown_model_is_404_with_suggestions(api: httpx.Client) -> None:
    error = assert_error(api.get("/models/openai/gpt-4o-mni"), 404, "model_not_found")
    assert "openai/gpt-4o-mini" in error["message"] and error["param"] == "model"
    assert (
        "openai/gpt-4o"
        in assert_error(api.get("/models/gpt-4o"), 404, "model_not_found")["message"]
    )


DEMO_KEY = "Bearer sk-emu-demo-all"


def test_an_unknown_model_id_longer_than_any_is_not_said_whole(api: httpx.Client) -> None:
    body = {"model": "x" * 100_000, "messages": [{"role": "user", "content": "hi"}]}
    answer = api.post("/chat/completions", json=body, headers={"Authorization": DEMO_KEY})
    error = assert_error(answer, 404, "model_not_found")
    assert len(error["message"]) < 400 and "(100,000 characters)" in error["message"]
    assert error["param"] == "model"


def test_models_page_with_limit_and_cursor(api: httpx.Client) -> None:
    everything = [m["id"] for m in api.get("/models").json()["data"]]
    seen, cursor = [], None
    while True:
        page = api.get(
            "/models", params={"limit": 5} | ({"cursor": cursor} if cursor else {})
        ).json()
        seen += [m["id"] for m in page["data"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert seen == everything
    assert_error(api.get("/models", params={"limit": 0}), 422, "invalid_request")


@pytest.mark.parametrize("path", ["/models", "/models/user"])
def test_the_next_link_pages_the_same_query(api: httpx.Client, path: str) -> None:
    query = {"supported_parameters": "response_format", "limit": 2}
    wanted = [
        m["id"]
        for m in api.get(path, params={"supported_parameters": "response_format"}).json()["data"]
    ]
    seen, page = [], api.get(path, params=query).json()
    while True:
        assert len(page["data"]) <= 2
        seen += [m["id"] for m in page["data"]]
        if page["links"]["next"] is None:
            break
        assert page["links"]["next"].startswith(f"/api/v1{path}?")
        page = api.get(str(api.base_url.join(page["links"]["next"]))).json()
    assert seen == wanted and len(wanted) > 2


def test_pricing_has_packages_fee_minimum_and_model_prices(api: httpx.Client) -> None:
    body = api.get("/ai-gateway/pricing").json()
    Pricing.model_validate(body)
    assert body["platform_fee_percent"] == 5.5
    assert body["minimum_charge_micros"] == 20
    assert [p["id"] for p in body["packages"]] == ["pkg_starter", "pkg_builder", "pkg_scale"]
    builder = body["packages"][1]
    assert builder["amount_usd"] == "50.000000"
    assert builder["credited_micros"] == 52_500_000
    mini = next(m for m in body["models"] if m["id"] == "openai/gpt-4o-mini")
    assert mini["prompt_micros_per_mtok"] == 150_000 and mini["provider"] == "openai"
    assert {p["name"] for p in mini["providers"]} == {"openai", "azure"}


def test_openai_sdk_lists_and_retrieves_models(client: openai.OpenAI) -> None:
    ids = [m.id for m in client.models.list()]
    assert "openai/gpt-4o" in ids and "emulator/echo" in ids
    model = client.models.retrieve("anthropic/claude-sonnet-4")
    assert model.owned_by == "anthropic" and model.object == "model"
    with pytest.raises(openai.NotFoundError) as info:
        client.models.retrieve("anthropic/claude-sonet-4")
    assert info.value.code == "model_not_found"


def test_openai_sdk_raises_its_error_classes(emulator: EmulatorHandle) -> None:
    def chat(key: str) -> None:
        with openai.OpenAI(base_url=emulator.base_url, api_key=key, max_retries=0) as client:
            client.chat.completions.create(
                model="emulator/echo", messages=[{"role": "user", "content": "hi"}]
            )

    with pytest.raises(openai.AuthenticationError) as info:
        chat("sk-emu-demo-disabled")
    assert info.value.code == "key_disabled"
    with pytest.raises(openai.PermissionDeniedError) as info2:
        chat("sk-emu-demo-video")
    assert info2.value.code == "insufficient_scope"


def test_openrouters_catalog_views(api: httpx.Client, demo: EmulatorHandle) -> None:
    """`/models/count`, `/models/user`, `/model/{id}`, a model's endpoints and the
    providers, as OpenRouter's SDKs read them."""
    listed = api.get("/models").json()["data"]
    assert api.get("/models/count").json() == {"data": {"count": len(listed)}}
    assert api.get("/models/user").json()["data"] == listed
    assert api.get("/model/openai/gpt-4o").json()["data"]["id"] == "openai/gpt-4o"
    with demo.providers.down("azure"):
        found = api.get("/models/openai/gpt-4o/endpoints").json()["data"]
    assert found["id"] == "openai/gpt-4o" and found["architecture"]["instruct_type"] is None
    ends = {e["tag"]: e for e in found["endpoints"]}
    assert list(ends) == ["openai", "azure"] and ends["openai"]["provider_name"] == "OpenAI"
    assert (ends["openai"]["status"], ends["azure"]["status"]) == (0, -2)
    assert (ends["openai"]["uptime_last_30m"], ends["azure"]["uptime_last_30m"]) == (100.0, 0.0)
    assert ends["openai"]["pricing"]["prompt"] == listed[0]["pricing"]["prompt"]
    video = api.get("/models/vidprov/v1.6/endpoints").json()["data"]
    assert video["endpoints"] == [] and video["architecture"]["tokenizer"] == "Other"
    missing = api.get("/models/nope/x/endpoints")
    assert assert_error(missing, 404, "model_not_found")["param"] == "model"
    listed_providers = api.get("/providers").json()
    slugs = [p["slug"] for p in listed_providers["data"]]
    assert slugs[:3] == ["openai", "azure", "anthropic"] and "emulator-slow" in slugs
    assert (listed_providers["object"], listed_providers["has_more"]) == ("list", False)
    paged, cursor = [], None
    while True:  # SPEC section 8's paging, as on every list
        page = api.get(
            "/providers", params={"limit": 4, "cursor": cursor} if cursor else {"limit": 4}
        ).json()
        assert len(page["data"]) <= 4
        paged += [p["slug"] for p in page["data"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert paged == slugs


def test_an_endpoint_lists_logprobs_only_where_routing_gives_them(
    api: httpx.Client, tenant: Tenant
) -> None:
    claude = api.get("/models/anthropic/claude-sonnet-4/endpoints").json()["data"]
    messages = [e for e in claude["endpoints"] if e["tag"] in ("anthropic", "bedrock")]
    assert messages and all("logprobs" not in e["supported_parameters"] for e in messages)
    gpt = api.get("/models/openai/gpt-4o/endpoints").json()["data"]["endpoints"]
    assert all("top_logprobs" in e["supported_parameters"] for e in gpt)
    for endpoint in messages:  # what it lists is what routing holds it to
        body = {
            "model": "anthropic/claude-sonnet-4",
            "messages": [{"role": "user", "content": "hi"}],
            "logprobs": True,
            "provider": {"only": [endpoint["tag"]], "require_parameters": True},
        }
        with tenant.client() as client:
            refused = client.post("/chat/completions", json=body)
        assert assert_error(refused, 503, "no_route_available")["param"] == "logprobs"


def test_the_list_filters_by_output_modality_and_parameters(api: httpx.Client) -> None:
    everything = api.get("/models").json()["data"]
    text = api.get("/models", params={"output_modalities": "text"}).json()
    video = api.get("/models", params={"output_modalities": "video"}).json()["data"]
    assert {m["modality"] for m in text["data"]} == {"text"} and video
    assert {m["modality"] for m in video} == {"video"}
    assert len(text["data"]) + len(video) == len(everything) == text["total_count"] + len(video)
    both = api.get("/models", params={"output_modalities": "text,video"}).json()["data"]
    assert (
        both == everything == api.get("/models", params={"output_modalities": "all"}).json()["data"]
    )
    tools = api.get("/models", params={"supported_parameters": "tools,logprobs"}).json()["data"]
    assert tools and all({"tools", "logprobs"} <= set(m["supported_parameters"]) for m in tools)
    assert "anthropic/claude-3.5-haiku" not in {m["id"] for m in tools}  # no logprobs there
    paged = api.get("/models", params={"output_modalities": "video", "limit": 1}).json()
    rest = api.get("/models", params={"output_modalities": "video", "cursor": paged["next_cursor"]})
    assert [m["id"] for m in paged["data"] + rest.json()["data"]] == [m["id"] for m in video]
    count = api.get("/models/count", params={"output_modalities": "text"}).json()
    assert count == {"data": {"count": len(text["data"])}}
