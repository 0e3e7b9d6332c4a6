"""Every API key and user token is redacted from the journal, the fixtures' short ones too."""

from __future__ import annotations

from emulator.testing import EmulatorHandle, Tenant

# The fixtures' credentials are shorter than generated ones (`emu_user_` + 40 characters).
FIXTURE_SECRETS = ("sk-emu-demo-all", "emu_user_demo", "sk-emu-broke", "emu_user_other")


def test_fixture_keys_and_tokens_in_bodies_are_redacted(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    said = f"key {FIXTURE_SECRETS[0]} and token {FIXTURE_SECRETS[1]}; also " + ", ".join(
        FIXTURE_SECRETS[2:]
    )
    chat = {"model": "emulator/echo", "messages": [{"role": "user", "content": said}]}
    with tenant.client() as client:
        assert client.post("/chat/completions", json=chat).is_success
    entry = emulator.journal.last(account_id=tenant.account_id, path="/api/v1/chat/*")
    assert entry is not None
    text = str(entry)
    for secret in FIXTURE_SECRETS:
        assert secret not in text, secret
    content = entry["request"]["body"]["messages"][0]["content"]
    assert content == (
        "key sk-emu-...[redacted] and token emu_user_...[redacted]; "
        "also sk-emu-...[redacted], emu_user_...[redacted]"
    )


def test_a_secret_in_the_query_string_is_redacted(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as client:
        client.get("/ai-gateway/usage", params={"note": "sk-emu-demo-all"})
    entry = emulator.journal.last(account_id=tenant.account_id, path="/api/v1/ai-gateway/usage")
    assert entry is not None and entry["query"] == "note=sk-emu-...[redacted]"
