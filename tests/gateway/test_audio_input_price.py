"""Audio heard at its own price: a route with `audio_input_micros_per_mtok` (the catalog's
`pricing.audio`: 1 USD a million tokens on Gemini 2.5 Flash, against 0.30 for text)
prices a prompt's audio tokens at it, in the charge, `cost_details`, the hold and the
quote; a route without one prices them as the rest of the prompt."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from openrouter import OpenRouter

from emulator.billing.pricing import Fees, MediaBill, charge_for
from emulator.testing import Tenant
from tests.helpers import wav

FLASH = "google/gemini-2.5-flash"  # 300,000 / 2,500,000 micros a million, audio 1,000,000
PRO = "google/gemini-2.5-pro"  # 1,250,000 / 10,000,000, audio at the prompt price
FEES = Fees(5.5, 20)
HEARD = 80  # tokens of a 2.5 s clip
CLIP = {"type": "input_audio", "input_audio": {"data": wav(2.5), "format": "wav"}}
TEXT = {"type": "text", "text": "What is said in this clip?"}


def heard_chat(model: str = FLASH, **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": [TEXT, CLIP]}], **extra}


def flash_charge(prompt: int, completion: int) -> int:
    bill = (MediaBill(HEARD, 1_000_000, prompt=True),)
    return charge_for(prompt, completion, 300_000, 2_500_000, FEES, media=bill).charge_micros


def test_a_chat_answer_prices_the_audio_at_its_price(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(**heard_chat())
    usage = answer.usage
    assert usage is not None and usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.audio_tokens == HEARD
    extra = usage.model_extra or {}
    assert extra["charge_micros"] == flash_charge(usage.prompt_tokens, usage.completion_tokens)
    prompt_usd = ((usage.prompt_tokens - HEARD) * 300_000 + HEARD * 1_000_000) / 1e12
    assert extra["cost_details"]["upstream_inference_prompt_cost"] == pytest.approx(prompt_usd)
    # Without a price of its own, audio is prompt: Gemini 2.5 Pro's charge is the plain one.
    pro = client.chat.completions.create(**heard_chat(PRO))
    assert pro.usage is not None
    plain = charge_for(pro.usage.prompt_tokens, pro.usage.completion_tokens, 1_250_000,
                       10_000_000, FEES)  # fmt: skip
    assert (pro.usage.model_extra or {})["charge_micros"] == plain.charge_micros


def test_a_stream_and_its_settlement_price_the_audio(client: openai.OpenAI, tenant: Tenant) -> None:
    stream = client.chat.completions.create(
        **heard_chat(), stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    usage = chunks[-1].usage
    assert usage is not None
    charged = (usage.model_extra or {})["charge_micros"]
    assert charged == flash_charge(usage.prompt_tokens, usage.completion_tokens)
    with tenant.client() as http:
        stats = http.get("/generation", params={"id": chunks[-1].id}).json()["data"]
    assert round(stats["total_cost"] * 1_000_000) == charged


def test_responses_price_the_audio_too(tenant: Tenant) -> None:
    content = [{"type": "input_text", "text": TEXT["text"]}, CLIP]
    body = {"model": FLASH, "input": [{"role": "user", "content": content}]}
    with tenant.client() as http:
        usage = http.post("/responses", json=body).json()["usage"]
    assert usage["charge_micros"] == flash_charge(usage["input_tokens"], usage["output_tokens"])


def test_the_quote_and_the_hold_price_the_audio(tenant: Tenant) -> None:
    with tenant.client() as http:
        heard = http.post("/ai-gateway/quote", json=heard_chat(max_tokens=10)).json()
        body = heard_chat(max_tokens=10)
        body["messages"][0]["content"] = [TEXT]
        plain = http.post("/ai-gateway/quote", json=body).json()
    # 80 prompt tokens more: at 1 USD a million, not 0.30 (the estimate is in micros).
    extra = heard["estimated_provider_cost_micros"] - plain["estimated_provider_cost_micros"]
    assert extra == pytest.approx(HEARD * 1_000_000 / 1e6, abs=1)
    assert heard["hold_micros"] - plain["hold_micros"] >= extra


def test_the_catalog_lists_the_audio_price(tenant: Tenant, router: OpenRouter) -> None:
    with tenant.client() as http:
        flash = http.get(f"/models/{FLASH}").json()["pricing"]
        pro = http.get(f"/models/{PRO}").json()["pricing"]
    assert (flash["audio"], flash["audio_input_micros_per_mtok"]) == ("0.000001", 1_000_000)
    assert pro.get("audio") is None  # the prompt price
    listed = {m.id: m for m in router.models.list().result.data}
    assert listed[FLASH].pricing.audio == "0.000001"
