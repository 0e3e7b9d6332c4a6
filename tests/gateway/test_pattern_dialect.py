"""JSON Schema patterns are ECMA-262's: what zod and Ajv write (`\\p{L}`, named groups,
`\\u{1F600}`) is taken, means what JavaScript says it means, and gets values
JavaScript accepts.

A review found `z.string().emoji()` and `\\p{L}` refused as "not a 'regex'": the
format check and the matcher read patterns as Python's."""

from __future__ import annotations

import json
import random
import subprocess
import time
from typing import Any

import openai
import pytest

from emulator.gateway.pattern_dialect import for_parsing
from emulator.gateway.pattern_search import search
from emulator.gateway.pattern_values import pattern_cost
from emulator.gateway.schema_values import value_for
from emulator.testing import Tenant
from tests.helpers import assert_error
from tests.js.test_js_clients import node_or_skip

# What zod 4 writes for `.emoji()`, and other patterns of JavaScript's dialect.
ZOD_EMOJI = (
    r"^(?=[\s\S]*[\p{Extended_Pictographic}\p{Regional_Indicator}\u20E3])"
    r"[\p{Extended_Pictographic}\p{Emoji_Component}]+$"
)
ECMA_PATTERNS = [
    ZOD_EMOJI,
    r"^\p{L}+$",
    r"^\p{Lu}\p{Ll}+$",
    r"^[\p{L}\p{N} ]{2,8}$",
    r"^\P{L}+$",
    r"^[^\p{L}]+$",
    r"^\p{Script=Greek}{3}$",
    r"^\p{sc=Cherokee}+$",
    r"^(?<year>\d{4})-(?<month>\d{2})$",
    r"^(?<w>[a-z]+)-\k<w>$",
    r"^\u{1F600}+$",
    r"^\ud83c\udf89!$",
    r"^a\cJ?b$",
    r"^\d+$",
    r"^\w+$",
    r"^[\w-]+@[\w-]+\.com$",
    r"^[^\d\s]+$",
    r"^[\D]{2}$",
    r"^[^\W]+$",
    r"^\S+\s\S+$",
    r"\bcat\b",
    r"^\B-.$",
    r"^\\d$",
    r"^[\b]?x$",
    r"^a[^]b$",
    r"^[^]{2}$",
    r"^a[]*b$",
    r"^x|[]$",
    r"(?<=\d+)x$",
    r"^.*(?<=ab|c)$",
    r"(?<!\p{L}+)9",
]
STRINGS = [
    "", "a", "abc", "Abc", "ABC", "héllo", "Ωμέγα", "αβγ", "\u13a0\u13a1\u13a2", "2026-01", "12345",
    "٣٤", "é", "x_y", "ada@example.com", "a b", "a\u00a0b", "a\ufeffb", "a\x85b",
    "a\x1cb", "\U0001f600", "\U0001f600\U0001f600", "👍9", "🎉!", "a\nb", "ab",
    "cat", "concat", "the cat sat", "écat", "\\d", "\bx", "x", "🇫🇷", "a1-b2-a1",
    "abc-abc", "9", "#️⃣", "12x", "a9", "a\rb",
]  # fmt: skip


def test_javascripts_escapes_are_taken() -> None:
    assert search(r"^\p{L}+$", "héllo") and not search(r"^\p{L}+$", "h1")
    assert search(r"^(?<y>\d{4})-\k<y>$", "2026-2026")
    assert not search(r"^(?<y>\d{4})-\k<y>$", "2026-2027")
    assert search(r"^\u{1F600}$", "\U0001f600")
    assert search(r"^\ud83d\ude00$", "\U0001f600")  # a surrogate pair is one character
    assert search(r"^a\cJb$", "a\nb")


def test_classes_mean_what_javascript_says() -> None:
    assert not search(r"^\d$", "٣")  # ASCII digits only
    assert not search(r"^\w$", "é")
    assert search(r"^\s$", "\ufeff") and not search(r"^\s$", "\x85")
    assert search(r"^[^\W]$", "a") and not search(r"^[^\W]$", "é")
    assert search(r"\bcat", "écat")  # é is not a word character, so a boundary


def test_empty_and_any_classes_and_lookbehinds_of_any_width() -> None:
    assert search(r"^a[^]b$", "a\nb") and not search(r"^a[^]b$", "ab")
    assert not search(r"[]", "anything") and search(r"^a[]*b$", "ab")
    assert search(r"(?<=\d+)x", "12x") and not search(r"(?<=\d+)x", "ax")
    assert for_parsing(r"[]|[^]") == "(?:(?!))|(?s:.)"


def test_python_spellings_still_work() -> None:
    assert search(r"^(?P<y>\d{2})(?P=y)$", "1212")
    assert search(r"(?i)^abc\Z", "ABC")


def test_patterns_in_pythons_words_are_parsed_as_before() -> None:
    """Strings drawn for a pattern that says nothing JavaScript-only stay the same."""
    for pattern in (r"^\d{3}-[a-z]+$", r"^(?P<a>x)(?P=a)$", r"(?<=a)b", r"[\]\\]\w\s\b"):
        assert for_parsing(pattern) == pattern


def test_a_long_pattern_is_rewritten_in_one_pass() -> None:
    """Each escape read the rest of the pattern: 1,600,000 of them took about a minute."""
    start = time.perf_counter()
    assert for_parsing(r"\d" * 1_600_000) == r"\d" * 1_600_000
    assert time.perf_counter() - start < 20  # some 1 s; the slack is for a loaded machine


def test_a_property_counts_toward_the_size_limit() -> None:
    assert pattern_cost(r"^\p{L}{5000}$")[0] == 5000


def test_matches_and_drawn_strings_agree_with_javascript() -> None:
    """Every pattern against every string, and the strings drawn for each pattern, as
    Node's `RegExp` with the `u` flag says."""
    node = node_or_skip()
    drawn = {
        p: [value_for({"type": "string", "pattern": p}, random.Random(seed)) for seed in range(5)]
        for p in ECMA_PATTERNS
    }
    pairs = [(p, s) for p in ECMA_PATTERNS for s in STRINGS]
    pairs += [(p, s) for p, strings in drawn.items() for s in strings]
    script = (
        "const pairs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(pairs.map(([p, s]) => new RegExp(p, 'u').test(s))));"
    )
    done = subprocess.run(
        [node, "--input-type=commonjs", "-e", script],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    javascript = json.loads(done.stdout)
    ours = [search(p, s) for p, s in pairs]
    both = zip(pairs, javascript, ours, strict=True)
    differ = [(p, s, js) for (p, s), js, us in both if js != us]
    assert differ == []
    drawn_ok = javascript[len(ECMA_PATTERNS) * len(STRINGS) :]
    assert all(drawn_ok)


def _tagged_schema(pattern: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"tag": {"type": "string", "pattern": pattern}},
        "required": ["tag"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    "pattern",
    [ZOD_EMOJI, r"^(?<year>\d{4})-\d{2}$", r"^\p{Lu}\p{Ll}+$", r"(?<=\d+)x$", r"^[^]{3}$"],
)
def test_structured_output_with_such_a_pattern_through_the_sdk(
    client: openai.OpenAI, pattern: str
) -> None:
    completion = client.chat.completions.create(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": "Tag this"}],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "tagged", "strict": True, "schema": _tagged_schema(pattern)},
        },
    )
    tag = json.loads(completion.choices[0].message.content or "")["tag"]
    assert search(pattern, tag)
    arguments = client.chat.completions.create(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": "Tag this"}],
        tools=[
            {
                "type": "function",
                "function": {"name": "tag", "parameters": _tagged_schema(pattern)},
            }
        ],
        tool_choice="required",
    )
    call = (arguments.choices[0].message.tool_calls or [])[0]
    assert search(pattern, json.loads(call.function.arguments)["tag"])  # type: ignore[union-attr]


def test_a_pattern_javascript_refuses_too_is_400(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(
            model="openai/gpt-4o-mini",
            messages=[{"role": "user", "content": "Tag this"}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "t", "schema": _tagged_schema(r"^\p{NoSuchThing}$")},
            },
        )
    assert raised.value.code == "invalid_response_format"
    assert "is not a 'regex'" in raised.value.message


def test_a_named_group_in_patternproperties_over_http(tenant: Tenant) -> None:
    schema = {
        "type": "object",
        "patternProperties": {r"^(?<p>x)-\p{Ll}+$": {"type": "integer"}},
        "minProperties": 1,
        "additionalProperties": False,
    }
    body = {
        "model": "openai/gpt-4o",
        "messages": [{"role": "user", "content": "hi"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    }
    with tenant.client() as http:
        reply = http.post("/chat/completions", json=body)
        assert reply.status_code == 200, reply.text
        value = json.loads(reply.json()["choices"][0]["message"]["content"])
        assert value and all(search(r"^x-\p{Ll}+$", key) for key in value)
        unclosed = {"name": "x", "schema": {"type": "string", "pattern": "(?<x"}}
        bad = {**body, "response_format": {"type": "json_schema", "json_schema": unclosed}}
        assert_error(http.post("/chat/completions", json=bad), 400, "invalid_response_format")
