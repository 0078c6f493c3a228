"""canonical_json and strict_canonical_json write exactly what json.dumps writes with the same
options (the log's hashes and every fingerprint depend on the bytes), and fail the same way."""

from __future__ import annotations

import enum
import json
from collections import OrderedDict
from typing import Any

import pytest

from datagauntlet.core.action_log import canonical_json, strict_canonical_json


class Color(enum.IntEnum):
    RED = 1


class Opaque:
    def __str__(self) -> str:
        return "opaque!"


def _dumps(value: Any, strict: bool) -> str:
    if strict:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


VALUES: list[Any] = [
    None,
    True,
    0,
    -7,
    10**30,
    1.5,
    -0.0,
    1e300,
    "",
    "plain",
    'quote " back \\ slash \n tab \t nul \x00',
    "ünïcødé ✓ 漢字 \U0001f600",
    "lone \ud800 surrogate",
    [],
    {},
    [1, [2, [3, {"z": 1, "a": [None, False]}]]],
    {"b": 1, "a": 2, "ä": 3, "A": 4, "": 5},
    OrderedDict([("z", 1), ("a", 2)]),
    (1, 2, (3,)),
    {"k": Color.RED},
    {1: "int key", 2: "x"},
    {True: 1},
    {"records": [{"id": f"rec_{i}", "amount": i * 3} for i in range(50)]},
]


@pytest.mark.parametrize("value", VALUES, ids=[repr(v)[:30] for v in VALUES])
def test_canonical_json_is_json_dumps_with_the_same_options(value: Any) -> None:
    assert canonical_json(value) == _dumps(value, strict=False)
    assert strict_canonical_json(value) == _dumps(value, strict=True)


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), [float("-inf")], {"x": Opaque()}, {"s": {1, 2}}]
)
def test_what_plain_json_lacks_is_written_as_dumps_does(value: Any) -> None:
    assert canonical_json(value) == _dumps(value, strict=False)
    with pytest.raises(ValueError):
        strict_canonical_json(value)


def test_circular_and_unsortable_values_fail_as_dumps_does() -> None:
    loop: list[Any] = []
    loop.append(loop)
    for value in (loop, {"a": 1, 2: "b"}):
        with pytest.raises((ValueError, TypeError)) as ours:
            canonical_json(value)
        with pytest.raises((ValueError, TypeError)) as theirs:
            _dumps(value, strict=False)
        assert type(ours.value) is type(theirs.value)
    with pytest.raises(ValueError):
        strict_canonical_json(loop)


def test_a_failed_encoding_leaves_the_next_one_unaffected() -> None:
    shared = {"a": [1, 2]}
    with pytest.raises(ValueError):
        strict_canonical_json({"ok": shared, "bad": float("nan")})
    # The same object again, in two places: not mistaken for a circular reference.
    assert canonical_json([shared, shared]) == '[{"a":[1,2]},{"a":[1,2]}]'


def test_deep_nesting_is_a_value_error_in_strict_mode() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ValueError):
        strict_canonical_json(deep)


def _random_value(draw: Any, depth: int = 0) -> Any:
    """A JSON-ish value built from keyed draws (no `random`): nested dicts and lists of
    strings (escapes, non-ASCII, long ones), ints, floats, bools and None."""
    kind = draw(7 if depth < 4 else 4)
    if kind == 0:
        return draw(10**6) - 500
    if kind == 1:
        return [None, True, False, 0.5, -1e-7, float("nan")][draw(6)]
    if kind in (2, 3):
        alphabet = 'ab"\\\n\tü✓\x01 '
        return "".join(alphabet[draw(len(alphabet))] for _ in range(draw(300 if kind == 3 else 12)))
    if kind in (4, 5):
        return [_random_value(draw, depth + 1) for _ in range(draw(6))]
    return {f"k{draw(20)}": _random_value(draw, depth + 1) for _ in range(draw(6))}


@pytest.mark.parametrize("walk_all", [False, True], ids=["as-is", "walk-every-dict"])
@pytest.mark.parametrize("seed", range(150))
def test_canonical_prefix_is_a_prefix_of_canonical_json(
    seed: int, walk_all: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datagauntlet.core import action_log
    from datagauntlet.core.action_log import canonical_prefix
    from datagauntlet.core.seeding import Keyed

    if walk_all:  # no dict counts as small: the walk itself is what is checked
        monkeypatch.setattr(action_log, "_SMALL_ITEMS", -1)

    stream = Keyed(seed).stream("value")
    value = _random_value(lambda n: stream.randint(0, n - 1))
    full = canonical_json(value)
    for limit in (0, 1, 5, 60, 241, 2000):
        got = canonical_prefix(value, limit)
        if len(full) <= limit:
            assert got == full
        else:
            assert len(got) >= limit and full.startswith(got)


def test_canonical_prefix_of_what_is_not_plain_json_is_still_a_prefix() -> None:
    from datagauntlet.core.action_log import canonical_prefix

    for value in [{"t": (1, 2)}, {1: "a"}, {"o": Opaque()}, [Color.RED], {"s": "x" * 500}]:
        full = canonical_json(value)
        got = canonical_prefix(value, 10)
        assert full.startswith(got) and len(got) >= min(10, len(full))


def test_canonical_prefix_does_not_encode_what_it_does_not_need() -> None:
    from datagauntlet.core.action_log import canonical_prefix

    class Explodes:
        def __str__(self) -> str:
            raise AssertionError("encoded past the prefix")

    page = {"a": [{"id": i} for i in range(30)], "b": [Explodes()]}
    got = canonical_prefix(page, 20)  # "b" comes after the first 20 characters: never encoded
    assert len(got) >= 20 and canonical_json({"a": page["a"], "b": []}).startswith(got)


def test_a_circular_value_inside_a_dict_is_the_value_error_dumps_raises() -> None:
    """canonical_json encodes without json.dumps's circular check and falls back to it only
    when the recursion limit stops a value: the error must still be dumps's own."""
    inner: dict[str, Any] = {"k": [1, 2]}
    inner["self"] = {"again": inner}
    with pytest.raises(ValueError, match="Circular reference"):
        canonical_json({"outer": inner})
    with pytest.raises(ValueError):
        strict_canonical_json([inner])
    deep: Any = {}
    for _ in range(5_000):
        deep = {"d": deep}
    with pytest.raises(RecursionError):
        _dumps(deep, strict=False)
    with pytest.raises(RecursionError):
        canonical_json(deep)
    assert canonical_json({"after": [inner["k"]]}) == '{"after":[[1,2]]}'


# The module builds its encoders once, at import; building them again here is what lets a
# change to how they are built (the C path or the standard one) show.
@pytest.mark.parametrize("c_path", [True, False], ids=["C-encoder", "json.dumps-fallback"])
def test_an_encoder_built_either_way_writes_what_json_dumps_writes(
    c_path: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datagauntlet.core import action_log

    if not c_path:
        monkeypatch.setattr(action_log, "c_make_encoder", None)
    loose = action_log._encoder(str, True)
    strict = action_log._encoder(json.JSONEncoder().default, False)
    for value in [*VALUES, float("nan"), {"x": Opaque()}]:
        assert loose(value) == _dumps(value, strict=False), value
    for value in VALUES:
        assert strict(value) == _dumps(value, strict=True), value
    for value in (float("nan"), [float("inf")]):
        with pytest.raises(ValueError):
            strict(value)
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError):
        loose(loop)
    # a circular value whose first keys need the encoder's options: still dumps's own error
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    for encode, value in (
        (loose, {"a": Opaque(), "b": cycle}),  # default= is called first
        (strict, {"b": Opaque(), "a": cycle}),  # keys are sorted: the cycle is met first
        (loose, {"a": float("nan"), "b": cycle}),  # allow_nan holds for the loose one
    ):
        with pytest.raises(ValueError, match="Circular reference"):
            encode(value)
    with pytest.raises(TypeError):  # a key JSON cannot have is refused, not skipped
        loose({(1, 2): "x"})
    shared = [1]
    assert loose([shared, shared]) == "[[1],[1]]"  # a fresh marker dict each call
    assert loose([shared]) == "[[1]]"


def test_a_prefix_is_never_shorter_than_the_limit_at_any_limit() -> None:
    # Every limit up to the whole text: the walk must stop neither a character early (at a
    # closing bracket or between list slices) nor before the limit.
    from datagauntlet.core.action_log import canonical_prefix

    values = [
        [[1, 2], [3], [], ["ab", "c"] * 5, list(range(12))],
        {"a": [{"id": i, "v": "x" * (i % 3)} for i in range(15)], "b": [[7] * 9]},
        [list(range(i)) for i in range(9)],
        {"s": "abcdefghij" * 3, "t": [True, None, 1.5, False], "u": None, "v": 7, "w": True},
        "a top-level string \u00e9\n" * 3,
        [True, False, None, 2.5, "xy", '"quoted"'],
        {"k\u00e9y": {"inner": [1, 2]}, "l": [[["deep"]]], "z": "tail" * 5},
    ]
    for value in values:
        full = canonical_json(value)
        for limit in range(len(full) + 2):
            got = canonical_prefix(value, limit)
            assert full.startswith(got), (value, limit)
            assert len(got) >= min(limit, len(full)), (value, limit, got)
