"""Read and check a fixtures folder (plain YAML files a user can copy and edit).

A mistake in a user's fixtures is reported with the file and the field, not
as a stack trace. Parsed fixtures are cached, so a reset costs no parsing.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from emulator.gateway.free_tier import SUFFIX as FREE_SUFFIX
from emulator.settings import default_fixtures_dir
from emulator.store.fixture_models import Fixtures


class FixtureError(Exception):
    """A fixtures folder that cannot be loaded; the message names file and field."""


_FILES = {
    "world": ("world.yaml", None),
    "pricing": ("pricing.yaml", None),
    "providers": ("providers.yaml", "providers"),
    "models": ("models.yaml", "models"),
    "accounts": ("accounts.yaml", "accounts"),
    "replies": ("replies.yaml", "replies"),
    "video": ("video.yaml", None),
}
# Keyed by the files' contents, not their times: a file edited twice within one tick of
# the file system's clock (a second on some) is read again.
_cache: dict[tuple[str, bytes], Fixtures] = {}
_CACHED = 8


def load_fixtures(folder: Path) -> Fixtures:
    folder = folder.expanduser().resolve()
    if not folder.is_dir():
        raise FixtureError(f"fixtures folder {folder} does not exist")
    digest = hashlib.blake2b(digest_size=16)
    for name, _ in _FILES.values():
        try:
            data = (folder / name).read_bytes()
        except OSError as exc:  # missing (the bundled file fills in) or unreadable
            data = type(exc).__name__.encode()
        digest.update(b"%d:%s" % (len(data), data))
    stamp = (str(folder), digest.digest())
    if stamp not in _cache:
        while len(_cache) >= _CACHED:
            del _cache[next(iter(_cache))]
        _cache[stamp] = _parse(folder)
    return _cache[stamp]


def _parse(folder: Path) -> Fixtures:
    import yaml  # only when fixtures are (re)read, not on every start-up path

    loader = _loader()
    raw: dict[str, Any] = {"source": str(folder)}
    for field, (filename, list_key) in _FILES.items():
        path = folder / filename
        if not path.exists():  # a partial folder: the bundled file fills the gap
            path = default_fixtures_dir() / filename
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        except RepeatedKey as exc:
            raise FixtureError(f"{path}: {exc}") from None
        except yaml.YAMLError as exc:
            raise FixtureError(f"{path}: not valid YAML: {exc}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise FixtureError(f"{path}: cannot be read: {exc}") from exc
        raw[field] = _section(path, data, list_key)
    try:
        fixtures = Fixtures.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        section, *rest = (str(part) for part in first["loc"])
        where = ".".join(rest) or "(top level)"
        filename = _FILES.get(section, (section, None))[0]
        raise FixtureError(f"{folder / filename}: {where}: {first['msg']}") from exc
    _check_references(fixtures)
    _check_clip_files(folder, fixtures)
    return fixtures


class RepeatedKey(ValueError):
    """A mapping in a fixtures file gives one key twice."""


@functools.cache
def _loader() -> type:
    """YAML's safe loader (libyaml's: ten times faster) refusing a key given twice in
    one mapping: plain YAML keeps the last, so a `replies:` pasted below the file's
    own would silently drop every rule above it."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class NoRepeatedKeys(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            first: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # `<<:` may override
                    continue
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                try:
                    seen = first.get(key)
                except TypeError:  # unhashable: YAML's own error says so below
                    continue
                if seen is not None:
                    raise RepeatedKey(
                        f"line {line}: the key {key!r} is given twice in one mapping "
                        f"(first at line {seen}): YAML would keep only the last"
                    )
                first[key] = line
            return super().construct_mapping(node, deep=deep)

    return NoRepeatedKeys


def _check_clip_files(folder: Path, fx: Fixtures) -> None:
    """Each clip's file is there (in the folder, else the bundled one, as it is looked up
    when a video is served): found missing then, a request would fail."""
    for ratio, clip in fx.video.clips.items():
        for seconds, relative in clip.files.items():
            where = (folder / relative, default_fixtures_dir() / relative)
            if not any(path.is_file() for path in where):
                raise FixtureError(
                    f"{folder / 'video.yaml'}: clips.{ratio}.files.{seconds}: no file "
                    f"{relative!r} in {folder} (nor in the bundled fixtures)"
                )


def _section(path: Path, data: Any, list_key: str | None) -> Any:
    """A file's content: a mapping, whose one key is `list_key` for a file of a list (a
    misspelt key would load as an empty list, and seeding would drop the whole list).
    An empty file is an empty section."""
    if data is None:
        return [] if list_key else {}
    if not isinstance(data, dict):
        raise FixtureError(f"{path}: (top level): must be a mapping, not {type(data).__name__}")
    if list_key is None:
        return data
    others = sorted(str(k) for k in data if k != list_key)
    if others:
        raise FixtureError(
            f"{path}: (top level): unknown key {others[0]!r}: the file holds `{list_key}:`"
        )
    return data.get(list_key) or []


def _check_references(fx: Fixtures) -> None:
    # A name twice would be one row written twice when seeding (a 500 on reset).
    _unique("providers.yaml provider names", [p.name for p in fx.providers])
    providers = {p.name for p in fx.providers}
    for model in fx.models:
        _unique(f"models.yaml: {model.id}: providers", [e.provider for e in model.providers])
        for entry in model.providers:
            if entry.provider not in providers:
                raise FixtureError(
                    f"models.yaml: {model.id} names provider {entry.provider!r}, "
                    "which providers.yaml does not define"
                )
    _check_catalog_ids(fx)
    _unique("accounts.yaml account ids", [a.id for a in fx.accounts])
    _unique("accounts.yaml key ids", [k.id for a in fx.accounts for k in a.keys])
    # One bearer value is one caller: a secret that is also a token cannot say whose.
    secrets = [k.secret for a in fx.accounts for k in a.keys]
    tokens = [t for a in fx.accounts for t in a.user_tokens]
    _unique("accounts.yaml key secrets and user tokens", secrets + tokens)


def _check_catalog_ids(fx: Fixtures) -> None:
    """Each id GET /api/v1/models lists is there once: the text models, the `:free`
    variants they imply and the video models share one list (and its cursors, which
    name an id: a repeated one sent a client's paging round for ever)."""
    listed = [(m.id, "models.yaml") for m in fx.models]
    listed += [(m.id, "video.yaml") for m in fx.video.models]
    listed += [
        (m.id + FREE_SUFFIX, f"models.yaml ({m.id}'s free_variant)")
        for m in fx.models
        if m.free_variant
    ]
    first: dict[str, str] = {}
    for model_id, source in listed:
        if model_id in first:
            raise FixtureError(
                f"{source}: the model id {model_id!r} is in the catalog twice "
                f"(also in {first[model_id]})"
            )
        first[model_id] = source


def _unique(what: str, values: list[str]) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise FixtureError(f"{what}: {value!r} appears twice")
        seen.add(value)
