"""Fixtures that would load and then misbehave are refused at load, naming file and
field: repeated keys and ids, rules the API itself enforces, names the code reads."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from emulator.cli import main
from emulator.clock import iso
from emulator.runtime import open_runtime
from emulator.server import BackgroundServer
from emulator.settings import Settings, default_fixtures_dir
from emulator.store.fixtures import FixtureError, load_fixtures


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the bundled fixtures, to edit."""
    copy = tmp_path / "fixtures"
    shutil.copytree(default_fixtures_dir(), copy)
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def refused(folder: Path, message: str) -> str:
    with pytest.raises(FixtureError, match=message) as caught:
        load_fixtures(folder)
    return str(caught.value)


def test_a_repeated_key_is_refused_naming_file_and_line(folder: Path) -> None:
    """The README's `replies:` example pasted below the file's own would have replaced
    every bundled rule."""
    replies = folder / "replies.yaml"
    lines = replies.read_text().count("\n")
    with replies.open("a") as out:
        out.write('replies:\n  - {pattern: "^x$", reply: y}\n')
    error = refused(folder, "the key 'replies' is given twice")
    assert str(replies) in error and f"line {lines + 1}:" in error


def test_a_repeated_key_in_a_nested_mapping_is_refused(folder: Path) -> None:
    edit(folder / "video.yaml", "sound: false\n", "sound: false\n    sound: true\n")
    refused(folder, r"video\.yaml: line \d+: the key 'sound' is given twice")


def test_a_yaml_merge_key_may_still_be_overridden(tmp_path: Path) -> None:
    (tmp_path / "replies.yaml").write_text(
        'replies:\n  - &hi {pattern: "^hi$", reply: Hello}\n  - {<<: *hi, reply: Hey}\n'
    )
    assert [r.reply for r in load_fixtures(tmp_path).replies] == ["Hello", "Hey"]


def test_the_cli_says_which_key_is_repeated(tmp_path: Path, folder: Path) -> None:
    edit(folder / "world.yaml", "default_rate_limit_rpm: 600", "default_rate_limit_rpm: 600\n" * 2)
    result = CliRunner().invoke(
        main, ["reset", "--fixtures", str(folder), "--db", str(tmp_path / "state.db")]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "world.yaml: line" in result.output and "'default_rate_limit_rpm'" in result.output


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, httpx.Client]]:
    """A server on a fixtures folder of its own, and a client on its root."""
    folder = tmp_path_factory.mktemp("served") / "fixtures"
    shutil.copytree(default_fixtures_dir(), folder)
    server = BackgroundServer(Settings(db=":memory:", fixtures=folder, log_level="warning"))
    server.start()
    with httpx.Client(base_url=server.url) as client:
        yield folder, client
    server.stop()


def reset_refused(served: tuple[Path, httpx.Client], file: str, old: str, new: str) -> str:
    """Break `file` of the served folder, reset: a 409 `invalid_fixtures` (its message
    returned), and the file is put back."""
    folder, client = served
    path = folder / file
    good = path.read_text()
    edit(path, old, new)
    try:
        answer = client.post("/_emulator/reset")
    finally:
        path.write_text(good)
    assert answer.status_code == 409, answer.text
    error = answer.json()["error"]
    assert error["code"] == "invalid_fixtures" and file in error["message"]
    message: str = error["message"]
    return message


ECHO_FREE = """
  - id: emulator/echo:free
    name: Echo free, by hand
    description: The same id as echo's free variant.
    created: "2026-01-01"
    context_length: 32768
    max_output_tokens: 4096
    providers:
      - {provider: emulator, prompt_micros_per_mtok: 0, completion_micros_per_mtok: 0}
"""


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        (
            "models.yaml",
            "id: openai/gpt-4o-mini",
            "id: openai/gpt-4o",
            "models.yaml: the model id 'openai/gpt-4o' is in the catalog twice",
        ),
        (
            "models.yaml",
            "\n  - id: emulator/fail-503",
            ECHO_FREE + "\n  - id: emulator/fail-503",
            r"models\.yaml \(emulator/echo's free_variant\): the model id 'emulator/echo:free' "
            r"is in the catalog twice \(also in models\.yaml\)",
        ),
        (
            "video.yaml",
            "id: vidprov/v1.6",
            "id: vidprov/v2-master",
            "video.yaml: the model id 'vidprov/v2-master' is in the catalog twice",
        ),
        (
            "video.yaml",
            "id: emulator/video",
            "id: emulator/echo",
            r"video\.yaml: the model id 'emulator/echo' is in the catalog twice \(also in "
            r"models\.yaml\)",
        ),
    ],
    ids=["text", "free-variant", "video", "video-and-text"],
)
def test_a_catalog_id_listed_twice_is_refused(
    folder: Path, file: str, old: str, new: str, message: str
) -> None:
    """One id twice in GET /api/v1/models: its cursor, naming the id, sent a client's
    paging back to the first for ever."""
    edit(folder / file, old, new)
    refused(folder, message)


def test_a_reset_onto_a_repeated_catalog_id_is_409(served: tuple[Path, httpx.Client]) -> None:
    message = reset_refused(served, "video.yaml", "id: emulator/video", "id: emulator/echo")
    assert "'emulator/echo' is in the catalog twice" in message
    assert served[1].get("/api/v1/models", params={"limit": 2}).is_success  # still serving


GPT_4O_ROUTE = "{provider: openai, prompt_micros_per_mtok: 2500000,"


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        (
            "models.yaml",
            GPT_4O_ROUTE,
            "{provider: azure, prompt_micros_per_mtok: 1, completion_micros_per_mtok: 1}\n"
            "      - " + GPT_4O_ROUTE,
            "models.yaml: openai/gpt-4o: providers: 'azure' appears twice",
        ),
        (
            "providers.yaml",
            "name: azure",
            "name: openai",
            "providers.yaml provider names: 'openai' appears twice",
        ),
    ],
    ids=["route", "provider"],
)
def test_a_provider_given_twice_is_refused(
    folder: Path, served: tuple[Path, httpx.Client], file: str, old: str, new: str, message: str
) -> None:
    """Seeding wrote the same row twice: a reset was a 500, the CLI blamed the state file."""
    edit(folder / file, old, new)
    refused(folder, message)
    assert message in reset_refused(served, file, old, new)
    result = CliRunner().invoke(
        main, ["reset", "--fixtures", str(folder), "--db", str(folder.parent / "state.db")]
    )
    assert result.exit_code == 1 and message in result.output
    assert "cannot be used" not in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "scopes: [studio.media]\n        product: studio",
            "scopes: [studio.media]",
            r"keys\.3: Value error, scopes: A key for product `ai_gateway` needs the "
            r"`ai.gateway` scope",
        ),
        (
            "spend_limit_micros: 2000\n        ",
            "",
            r"keys\.4: Value error, spend_reset_interval: `spend_reset_interval` only applies "
            "with a `spend_limit_micros`",
        ),
        ("scopes: [ai.gateway]", "scopes: []", r"keys\.1\.scopes: List should have at least 1"),
        ("scopes: [ai.gateway]", "scopes: [ai.gateway, ai.gateway]",
         r"keys\.1: Value error, a scope is listed twice"),
        ("product: video", "product: videos", r"keys\.2\.product: Input should be"),
        (
            "scopes: [ai.gateway]",
            "scopes: [ai.gateway]\n        environment: my env",
            r"keys\.1\.environment: String should match pattern",
        ),
    ],
    ids=["product-without-its-scope", "interval-without-limit", "no-scopes", "scope-twice",
         "unknown-product", "environment-with-a-space"],
)  # fmt: skip
def test_a_key_the_api_would_refuse_is_refused(
    folder: Path, old: str, new: str, message: str
) -> None:
    """Loaded, such a key answered every later PATCH with a 422 about fields not sent."""
    edit(folder / "accounts.yaml", old, new)
    refused(folder, r"accounts\.yaml: 0\." + message)


@pytest.mark.parametrize("max_images", ["", "\n    max_images: 1"])
def test_a_multi_image_video_model_needs_room_for_two_images(folder: Path, max_images: str) -> None:
    """With the default of one, every request was told the task "takes 2 to 1 images"."""
    edit(folder / "video.yaml", "\n    max_images: 4", max_images)
    refused(folder, r"video\.yaml: models\.1: Value error, multi-image2video takes 2 images")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "  vidprov_lipsync: {",
            "  vidprov_lipsinc: {",
            r"families\.vidprov_lipsinc\.\[key\]: Input should be 'background_response'",
        ),
        (
            "  lipsync_micros_per_second:",
            "  lipsync_micros_per_sec:",
            r"tasks\.lipsync_micros_per_sec\.\[key\]: Input should be 'lipsync_micros_per_second'",
        ),
    ],
    ids=["family", "task-price"],
)
def test_a_misspelt_job_family_or_task_price_is_refused(
    folder: Path, old: str, new: str, message: str
) -> None:
    """Ignored, it made those jobs instant, or those tasks free."""
    edit(folder / "video.yaml", old, new)
    refused(folder, r"video\.yaml: " + message)


def test_the_job_families_are_the_ones_the_code_schedules() -> None:
    from typing import get_args

    from emulator.gateway import background
    from emulator.store.fixture_models import JobFamily, TaskPrice
    from emulator.video import service as video

    families = set(get_args(JobFamily))
    assert {video.FAMILY, background.FAMILY} < families
    assert {f"vidprov_{task}" for task in ("effects", "lipsync", "multi_elements")} < families
    bundled = load_fixtures(default_fixtures_dir()).video
    assert set(bundled.families) == families and set(bundled.tasks) == set(get_args(TaskPrice))


def test_a_folder_without_video_yaml_takes_the_bundled_one(tmp_path: Path) -> None:
    (tmp_path / "world.yaml").write_text("default_rate_limit_rpm: 60\n")
    video = load_fixtures(tmp_path).video
    assert video == load_fixtures(default_fixtures_dir()).video


def test_a_value_both_a_key_secret_and_a_user_token_is_refused(folder: Path) -> None:
    """A bearer value names one caller: as both, it could not say whose."""
    edit(
        folder / "accounts.yaml", "user_tokens: [emu_user_other]", "user_tokens: [sk-emu-demo-all]"
    )
    refused(folder, "accounts.yaml key secrets and user tokens: 'sk-emu-demo-all' appears twice")


@pytest.mark.parametrize(
    ("value", "says"),
    [('""', "is blank"), ('" "', "is blank"), ('" sk-emu-x"', "no spaces at its ends"),
     ('"sk-emu-x "', "no spaces at its ends"), ('"sk-emu-caf\\u00e9"', "printable ASCII"),
     ('"sk-emu\\tx"', "printable ASCII")],
)  # fmt: skip
@pytest.mark.parametrize(
    ("old", "where"),
    [("secret: sk-emu-demo-gateway", r"0\.keys\.1\.secret"),
     ("user_tokens: [emu_user_demo]", r"0\.user_tokens\.0")],
    ids=["secret", "user-token"],
)  # fmt: skip
def test_a_credential_no_client_can_send_is_refused(
    folder: Path, old: str, where: str, value: str, says: str
) -> None:
    """The rule `--admin-token` keeps: a header cannot carry it as written."""
    new = old.replace("sk-emu-demo-gateway", value).replace("emu_user_demo", value)
    edit(folder / "accounts.yaml", old, new)
    refused(folder, rf"accounts\.yaml: {where}: Value error, a credential .*{says}")


@pytest.mark.parametrize(
    "model_id",
    ["openrouter/auto", "openai/gpt-5:online", "openai/gpt-5:nitro", "openai/gpt-5:floor",
     "openai/gpt-5:exacto"],
)  # fmt: skip
def test_a_model_id_that_is_routing_syntax_is_refused(folder: Path, model_id: str) -> None:
    """The gateway reads these as the auto router or a variant of another id: the model
    loaded, listed, and could never be asked for."""
    edit(folder / "models.yaml", "id: openai/gpt-4.1\n", f"id: {model_id}\n")
    refused(folder, rf"models\.yaml: 2\.id: Value error, '{model_id}' could never be asked for")


@pytest.mark.parametrize(
    ("written", "start"),
    [
        ("2026-03-01T12:00:00Z", "2026-03-01T12:00:00.000Z"),
        ("2026-03-01T14:00:00+02:00", "2026-03-01T12:00:00.000Z"),
        ("2026-03-01 12:00:00", "2026-03-01T12:00:00.000Z"),  # no offset: UTC
        ("2026-03-01", "2026-03-01T00:00:00.000Z"),
        ("'2026-03-01T12:00:00Z'", "2026-03-01T12:00:00.000Z"),
    ],
)
def test_an_unquoted_clock_start_is_taken(tmp_path: Path, written: str, start: str) -> None:
    """YAML reads an unquoted instant as a datetime: it was refused as "not a string"."""
    (tmp_path / "world.yaml").write_text(f"clock_start: {written}\n")
    assert iso(load_fixtures(tmp_path).world.clock_start_ts) == start
    rt = open_runtime(Settings(db=":memory:", fixtures=tmp_path, clock="manual"))
    assert rt.clock.now_iso() == start


def test_an_unquoted_clock_start_out_of_range_is_still_refused(tmp_path: Path) -> None:
    (tmp_path / "world.yaml").write_text("clock_start: 1960-01-01T00:00:00Z\n")
    refused(tmp_path, r"world\.yaml: clock_start: Value error, the clock runs from 1970")
