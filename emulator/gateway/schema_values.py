"""Values that validate against a JSON schema: tool-call arguments and structured output.

`value_for` draws a value from the seeded generator (`schema_draws`) and
checks it with jsonschema (the draft `$schema` names, 2020-12 by default:
`schema_drafts`; formats asserted) before handing it out: it never returns a
value the schema rejects. It draws in two passes:

- the *plain* pass is the generator of earlier versions: `type` (first
  non-null of a list), `properties`, `items`, `enum`, `const`, the first
  non-null branch of `anyOf`/`oneOf`, `allOf` merged, `$ref`, bounds and
  common `format`s. Answers users keep in snapshots come from it, so whatever
  it drew that was valid is drawn byte for byte as before.
- when that value is invalid, the *strict* pass honours the rest: `pattern`
  (`pattern_values`), `uniqueItems`, `multipleOf`, exclusive bounds,
  `minProperties`/`maxProperties`, `additionalProperties`/`patternProperties`/
  `propertyNames`, `dependentRequired`, `prefixItems`, `contains`, `not`,
  `enum` filtered by the rest of its schema, `anyOf`/`oneOf` branches tried
  in turn with their sibling keywords (`oneOf`: exactly one), `allOf`
  intersected, `$ref` with siblings, more `format`s. A few strict tries vary
  the choices; the last resort is the value found for the schema on a fixed seed.

Recursive `$ref`s are bounded: once a reference repeats on the path, values
below it are the smallest the schema allows (no optional properties, arrays
at `minItems`, `null` branches first).

`check_schema` is what the gateway calls before serving: a schema that is not
a JSON schema, that has contradictory bounds, that is past the emulator's
limits (nesting, sizes, patterns: `schema_limits`), or for which no valid value
can be found is refused with a sentence saying why. Verdicts are cached by the
schema's text, so a schema sent again costs one `json.dumps`.
"""

from __future__ import annotations

import copy
import json
import random
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from emulator.gateway import schema_notes
from emulator.gateway.pattern_search import PatternTooSlow, match_budget
from emulator.gateway.pattern_values import pattern_cost
from emulator.gateway.prompt_facts import Facts
from emulator.gateway.prompt_hints import Hints
from emulator.gateway.schema_drafts import in_2020_words, validator_class
from emulator.gateway.schema_draws import Gen, draw
from emulator.gateway.schema_limits import MAX_DEPTH, too_deep, too_large
from emulator.gateway.schema_strings import WORDS

if TYPE_CHECKING:  # jsonschema is imported on first use: plain chat never loads it
    from jsonschema.protocols import Validator

__all__ = ["WORDS", "SchemaProblem", "check_schema", "value_for"]

STRICT_TRIES = 4
MAX_SIZE = 4096  # the largest minItems / minLength / minProperties / pattern the emulator draws
_TOO_DEEP = (
    f"it nests objects and arrays more than {MAX_DEPTH} levels deep, the most the emulator takes"
)
_NOTHING = object()
_too_slow: dict[str, str] = {}  # schemas whose patterns ran out of time, and why
_BOUNDS = (
    ("minimum", "maximum"),
    ("minLength", "maxLength"),
    ("minItems", "maxItems"),
    ("minProperties", "maxProperties"),
    ("minContains", "maxContains"),
)
_NOT_SCHEMAS = ("const", "enum", "default", "examples", "required", "dependentRequired")


class SchemaProblem(ValueError):
    """No value can be drawn: `invalid` when it is not a JSON schema at all."""

    def __init__(self, message: str, *, invalid: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.invalid = invalid


def value_for(schema: Any, rng: random.Random, facts: Facts | None = None) -> Any:
    """A value `schema` accepts, drawn from `rng`, taking what the user said where the
    schema allows it (`facts`, handed out by `prompt_hints`) and keeping to what its
    descriptions note (`schema_notes`); SchemaProblem when there is none. A draw whose
    patterns take too long gives the value found when it was checked."""
    noted = schema_notes.restored(schema)
    if noted is not schema:
        try:
            return _value_for(noted, rng, facts)
        except SchemaProblem:
            pass  # the notes ask for what cannot be: the schema as sent
    return _value_for(schema, rng, facts)


def _value_for(schema: Any, rng: random.Random, facts: Facts | None) -> Any:
    text = _text(schema)
    try:
        with match_budget():
            found, value = _search(schema, text, rng, facts)
            if found:
                return value
    except PatternTooSlow:
        pass
    except RecursionError as exc:  # a schema check_schema would have refused as too deep
        raise SchemaProblem(_TOO_DEEP) from exc
    try:
        with match_budget():
            found, value = _probe(text)
    except PatternTooSlow as exc:
        raise SchemaProblem(exc.sentence()) from exc
    except RecursionError as exc:
        raise SchemaProblem(_TOO_DEEP) from exc
    if not found:
        raise SchemaProblem(value)
    return copy.deepcopy(value)


def check_schema(schema: Any) -> None:
    """Raise SchemaProblem when `schema` is not a JSON schema or cannot be satisfied."""
    text = _text(schema)
    if text in _too_slow:  # sent again: refused without spending the budget again
        raise SchemaProblem(_too_slow[text])
    try:
        with match_budget():
            problem = _problem(text)
    except RecursionError as exc:  # the depth check runs first; this is the net below it
        raise SchemaProblem(_TOO_DEEP) from exc
    except PatternTooSlow as exc:
        if len(_too_slow) >= 256:
            _too_slow.pop(next(iter(_too_slow)))
        _too_slow[text] = exc.sentence()
        raise SchemaProblem(exc.sentence()) from exc
    if problem is not None:
        raise SchemaProblem(problem[0], invalid=problem[1])


@lru_cache(maxsize=512)
def _problem(text: str) -> tuple[str, bool] | None:
    from jsonschema import SchemaError

    schema = json.loads(text)
    if too_deep(schema):  # before anything recursive runs over it
        return _TOO_DEEP, False
    try:
        validator_class(schema).check_schema(schema)
    except SchemaError as exc:
        return f"it is not a valid JSON schema: {exc.message}", True
    drawn = in_2020_words(schema)
    contradiction = _contradiction(drawn)
    if contradiction:
        return contradiction, False
    if (large := too_large(drawn)) is not None:
        return (
            f"{large} (sizes add up, and multiply along the nesting), the most the emulator draws",
            False,
        )
    found, value = _probe(text)
    return None if found else (value, False)


@lru_cache(maxsize=512)
def _probe(text: str) -> tuple[bool, Any]:
    """A valid value drawn from a fixed seed, or (False, why there is none)."""
    return _search(json.loads(text), text, random.Random(0))


@lru_cache(maxsize=512)
def _validator(text: str) -> Validator:
    """What a value is checked with: the validator of the schema's own draft."""
    schema = json.loads(text)
    cls = validator_class(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@lru_cache(maxsize=512)
def _drawing_validator(text: str) -> Validator:
    """What the generator checks parts of its value with (`Gen.fits`): 2020-12, over
    the schema in its words (`in_2020_words`); the same validator for a 2020-12 schema."""
    from jsonschema import Draft202012Validator

    schema = json.loads(text)
    drawn = in_2020_words(schema)
    if drawn is schema:
        return _validator(text)
    return Draft202012Validator(drawn, format_checker=Draft202012Validator.FORMAT_CHECKER)


def _text(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)


def _search(
    schema: Any, text: str, rng: random.Random, facts: Facts | None = None
) -> tuple[bool, Any]:
    """The plain pass, then strict tries, each checked; (False, why) when none is valid.
    `text` is the schema's (`_text`), which its validators are cached by."""
    validator = _validator(text)
    drawn, drawing = in_2020_words(schema), _drawing_validator(text)
    value: Any = _NOTHING
    for strict, attempt in [(False, 0), *((True, n) for n in range(STRICT_TRIES))]:
        try:
            hints = Hints(facts) if facts else None
            value = draw(drawn, Gen(rng, drawn, drawing, strict, attempt, hints))
        except PatternTooSlow:
            raise
        except Exception:
            value = _NOTHING
            continue
        if _is_valid(validator, value):
            return True, value
    return False, _why(validator, value)


def _is_valid(validator: Validator, value: Any) -> bool:
    if value is _NOTHING:
        return False
    try:
        return bool(validator.is_valid(value))
    except PatternTooSlow:
        raise
    except Exception:
        return False


def _why(validator: Validator, value: Any) -> str:
    from jsonschema.exceptions import best_match

    reason = "no value could be generated that satisfies it"
    if value is _NOTHING:
        return reason
    try:
        error = best_match(validator.iter_errors(value))
    except PatternTooSlow:
        raise
    except Exception:
        return reason
    return f"{reason} (the closest try failed: {error.message})" if error else reason


def _contradiction(schema: Any, where: str = "") -> str | None:
    """Bounds no value meets (`minimum` above `maximum`, ...) or sizes past MAX_SIZE, anywhere."""
    if isinstance(schema, list):
        parts = ((f"{where}/{i}", sub) for i, sub in enumerate(schema))
        return next((p for w, sub in parts if (p := _contradiction(sub, w))), None)
    if not isinstance(schema, dict):
        return None
    for low_key, high_key in _BOUNDS:
        low, high = _number(schema.get(low_key)), _number(schema.get(high_key))
        if low is not None and high is not None and low > high:
            return f"`{low_key}` {low} is above `{high_key}` {high} at {where or '/'}"
        if low_key != "minimum" and low is not None and low > MAX_SIZE:
            return f"`{low_key}` {low} at {where or '/'} is above the {MAX_SIZE} the emulator draws"
    if (costly := _costly_pattern(schema, where)) is not None:
        return costly
    lower = max(_present(schema, "minimum", "exclusiveMinimum"), default=None)
    upper = min(_present(schema, "maximum", "exclusiveMaximum"), key=_tightest, default=None)
    if (
        lower
        and upper
        and (lower[0] > upper[0] or (lower[0] == upper[0] and (lower[1] or upper[1])))
    ):
        return f"no number meets both the lower and the upper bound at {where or '/'}"
    children = ((f"{where}/{k}", v) for k, v in schema.items() if k not in _NOT_SCHEMAS)
    return next((p for w, sub in children if (p := _contradiction(sub, w))), None)


def _costly_pattern(schema: dict[str, Any], where: str) -> str | None:
    """A `pattern` (or `patternProperties` key) no string of MAX_SIZE characters matches,
    or whose required repeats alone would hold the matcher (`re` steps through each,
    even of an empty group): validating a value would take as long as drawing it."""
    patterns = [(schema.get("pattern"), f"`pattern` at {where or '/'}")]
    if isinstance(schema.get("patternProperties"), dict):
        at = f"{where}/patternProperties"
        patterns += [
            (key, f"`patternProperties` {key!r} at {at}") for key in schema["patternProperties"]
        ]
    for pattern, named in patterns:
        chars, steps = pattern_cost(pattern) if isinstance(pattern, str) else (0, 0)
        if chars > MAX_SIZE:
            needs = f"matches no string shorter than {chars} characters"
        elif steps > MAX_SIZE:
            needs = f"needs {steps} characters or repeats in one of its alternatives"
        else:
            continue
        return f"{named} {needs}, above the {MAX_SIZE} the emulator draws"
    return None


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value if ok else None


def _present(schema: dict[str, Any], inclusive: str, exclusive: str) -> list[tuple[float, bool]]:
    """(bound, excluded) for each of the two bounds given."""
    bounds = ((schema.get(inclusive), False), (schema.get(exclusive), True))
    return [(n, excluded) for value, excluded in bounds if (n := _number(value)) is not None]


def _tightest(bound: tuple[float, bool]) -> tuple[float, bool]:
    """Orders upper bounds: at the same number, the excluded one is the tighter."""
    return bound[0], not bound[1]
