"""Files in chat (`file` parts) and responses (`input_file` parts) prompts: a text
file's text and a PDF's pages are read and billed as the prompt's; a URL or a file id
is taken and not read; data that is not a file to read is a 400 naming the part,
unbilled."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pypdf import PdfReader, PdfWriter

from emulator.gateway.files import pdf_pages
from emulator.testing import Tenant
from tests.gateway.test_images import refused, spent
from tests.helpers import pdf_of

ECHO = "emulator/echo"
PDF = pdf_of("The moon is bright tonight.", "The tide follows it.\nTwice a day.")


def encrypted(pdf: bytes) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt("secret", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def chat_file(file: dict[str, Any], model: str = ECHO) -> dict[str, Any]:
    content = [{"type": "text", "text": "Read this."}, {"type": "file", "file": file}]
    return {"model": model, "messages": [{"role": "user", "content": content}]}


def responses_file(file: dict[str, Any], model: str = ECHO) -> dict[str, Any]:
    content = [{"type": "input_text", "text": "Read this."}, {"type": "input_file", **file}]
    return {"model": model, "input": [{"role": "user", "content": content}]}


def chat_text(text: str, model: str) -> dict[str, Any]:
    content = [{"type": "text", "text": "Read this."}, {"type": "text", "text": text}]
    return {"model": model, "messages": [{"role": "user", "content": content}]}


@pytest.mark.parametrize(
    ("media_type", "data", "read"),
    [
        ("text/plain", b"Caching keeps hot rows near.", "Caching keeps hot rows near."),
        ("text/markdown;charset=utf-8", "# Caf\u00e9".encode(), "# Caf\u00e9"),
        ("application/json", b'{"a": 1}', '{"a": 1}'),
        (
            "application/pdf",
            PDF,
            "The moon is bright tonight.\n\nThe tide follows it.\nTwice a day.",
        ),
    ],
)
def test_a_file_is_read_as_its_text(
    client: openai.OpenAI, media_type: str, data: bytes, read: str
) -> None:
    file = {"filename": "notes", "file_data": data_url(media_type, data)}
    chat = client.chat.completions.create(**chat_file(file))
    answer = client.responses.create(**responses_file(file))
    assert chat.choices[0].message.content == f"Read this.\n{read}"
    assert answer.output_text == f"Read this.\n{read}"


def test_a_file_is_billed_as_its_text_would_be(client: openai.OpenAI) -> None:
    pages = "The moon is bright tonight.\n\nThe tide follows it.\nTwice a day."
    model = "openai/gpt-4o"
    by_file = client.chat.completions.create(
        **chat_file({"file_data": data_url("application/pdf", PDF)}, model)
    )
    by_text = client.chat.completions.create(**chat_text(pages, model))
    assert by_file.usage and by_text.usage
    assert by_file.usage.prompt_tokens == by_text.usage.prompt_tokens > 20


@pytest.mark.parametrize(
    "file",
    [
        {"file_id": "file-abc"},
        {"file_data": "https://example.com/report.pdf", "filename": "report.pdf"},
        {"file_data": data_url("image/png", b"\x89PNG\r\n\x1a\n")},  # a type not read
    ],
)
def test_a_file_not_read_is_taken_and_adds_nothing(
    client: openai.OpenAI, file: dict[str, Any]
) -> None:
    chat = client.chat.completions.create(**chat_file(file))
    assert chat.choices[0].message.content == "Read this."
    answer = client.responses.create(**responses_file(file))
    assert answer.output_text == "Read this."
    url = client.responses.create(**responses_file({"file_url": "https://x.test/a.pdf"}))
    assert url.output_text == "Read this."


BAD_FILES = [
    ("report.pdf", "Invalid file data: expected an http(s) URL"),
    ("file:///etc/passwd", "Invalid file data"),
    ("data:application/pdf,%PDF-1.4", "Invalid file data"),  # not base64
    ("data:application/pdf;base64,!!!", "Invalid file data"),
    (data_url("application/pdf", b"hello"), "does not begin as a PDF does"),
    (data_url("application/pdf", PDF[:200]), "Invalid PDF: the PDF cannot be read"),
    (data_url("application/pdf", pdf_of(*["page"] * 101)), "at most 100 pages"),
    (data_url("application/pdf", encrypted(PDF)), "the PDF is encrypted"),
]


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize(("file_data", "says"), BAD_FILES, ids=[s for _, s in BAD_FILES])
def test_what_is_not_a_file_to_read_is_refused_unbilled(
    client: openai.OpenAI, tenant: Tenant, api: str, file_data: str, says: str
) -> None:
    before = spent(tenant)
    with pytest.raises(openai.BadRequestError) as refused:
        if api == "chat":
            client.chat.completions.create(**chat_file({"file_data": file_data}, "openai/gpt-4o"))
        else:
            client.responses.create(**responses_file({"file_data": file_data}, "openai/gpt-4o"))
    error = refused.value.body
    assert isinstance(error, dict) and says in error["message"], error
    where = "messages[0].content[1].file.file_data" if api == "chat" else "input[0].content[1]"
    assert error["param"].startswith(where), error
    assert spent(tenant) == before


@pytest.mark.parametrize(
    ("body", "param", "says"),
    [
        (chat_file({"filename": "a.pdf"}), "content[1].file", "needs `file_data` or `file_id`"),
        (
            {**chat_file({}), "messages": [{"role": "user", "content": [{"type": "file"}]}]},
            "content[0]",
            "needs `file`",
        ),
        (responses_file({"filename": "a.pdf"}), "content[1]", "`file_data`, `file_id` or"),
        (responses_file({"file_url": "ftp://x.test/a.pdf"}), "content[1].file_url", "pattern"),
    ],
)
def test_a_file_part_needs_a_file(
    tenant: Tenant, body: dict[str, Any], param: str, says: str
) -> None:
    error = refused(tenant, body)
    assert error["param"].endswith(param) and says in error["message"], error


@given(cut=st.integers(0, len(PDF)), junk=st.binary(max_size=64), at=st.integers(0, len(PDF)))
def test_damaged_pdf_bytes_are_read_or_refused_never_raised(cut: int, junk: bytes, at: int) -> None:
    """Whatever a client sends as a PDF, the reader answers pages or a ValueError (a 400)."""
    damaged = (PDF[:at] + junk + PDF[at:])[: max(cut, 5)]
    try:
        pages = pdf_pages(damaged)
    except ValueError as refused:
        assert str(refused)
    else:
        assert isinstance(pages, tuple) and all(isinstance(p, str) for p in pages)


def test_a_chat_answer_hands_back_the_pdfs_it_parsed(tenant: Tenant) -> None:
    """OpenRouter's `file` annotations: a PDF once (its hash, name and pages), whole and
    streamed; a client may send them back with its assistant message."""
    pdf = {"filename": "moon.pdf", "file_data": data_url("application/pdf", PDF)}
    body = chat_file(pdf, "openai/gpt-4o")
    body["messages"][0]["content"].append({"type": "file", "file": pdf})  # the same PDF
    parsed = {
        "type": "file",
        "file": {
            "hash": hashlib.sha256(PDF).hexdigest(),
            "name": "moon.pdf",
            "content": [
                {"type": "text", "text": "The moon is bright tonight."},
                {"type": "text", "text": "The tide follows it.\nTwice a day."},
            ],
        },
    }
    with tenant.client() as http:
        whole = http.post("/chat/completions", json=body).json()
        message = whole["choices"][0]["message"]
        assert message["annotations"] == [parsed]
        streamed = http.post("/chat/completions", json={**body, "stream": True}).text
        again = {
            **body,
            "messages": [*body["messages"], message, {"role": "user", "content": "And?"}],
        }
        assert http.post("/chat/completions", json=again).status_code == 200
        plain = http.post("/chat/completions", json=chat_text("no files", "openai/gpt-4o"))
    chunks = [json.loads(line[6:]) for line in streamed.splitlines() if line[6:7] == "{"]
    annotated = [c for c in chunks if c["choices"] and "annotations" in c["choices"][0]["delta"]]
    assert [c["choices"][0]["delta"]["annotations"] for c in annotated] == [[parsed]]
    finish = next(
        i for i, c in enumerate(chunks) if c["choices"] and c["choices"][0]["finish_reason"]
    )
    assert chunks.index(annotated[0]) == finish - 1
    assert "annotations" not in plain.json()["choices"][0]["message"]
