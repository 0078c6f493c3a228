"""Keyed and stream draws: each is the keyed draw of its label and position, in range, and
refused at its empty edges (rules that survived planted bugs and mutants, docs/mutation/)."""

from __future__ import annotations

import math

import pytest

from datagauntlet.core.seeding import Keyed, hash64, unit


def test_two_draws_from_one_stream_differ() -> None:
    stream = Keyed(7).stream("label")
    draws = [stream.unit() for _ in range(200)]
    assert len(set(draws)) == len(draws)
    ints = Keyed(7).stream("label")
    assert len({ints.randint(0, 10**9) for _ in range(50)}) == 50
    tokens = Keyed(7).stream("label")
    assert tokens.token() != tokens.token()


def test_a_stream_draw_is_the_keyed_draw_of_its_label_and_position() -> None:
    keyed = Keyed(7)
    stream = keyed.stream("label")
    assert [stream.token(10) for _ in range(3)] == [keyed.token("label", i, 10) for i in range(3)]
    assert len(keyed.stream("label").token()) == 12 and len(keyed.stream("label").token(5)) == 5
    assert keyed.stream("a").token() != keyed.stream("b").token()
    ints = keyed.stream("n")
    assert [ints.randint(0, 10**6) for _ in range(3)] == [
        keyed.randint("n", i, 0, 10**6) for i in range(3)
    ]


def test_the_module_unit_is_the_hash_scaled_into_the_unit_interval() -> None:
    for i in range(200):
        u = unit("label", i)
        assert 0.0 <= u < 1.0
        assert u == hash64("label", i) / 2**64


def test_a_stream_uniform_stays_in_its_range_and_is_the_streams_unit() -> None:
    stream, twin = Keyed(7).stream("u"), Keyed(7).stream("u")
    for _ in range(200):
        x = stream.uniform(-3.0, 5.0)
        assert -3.0 <= x < 5.0
        assert x == pytest.approx(-3.0 + 8.0 * twin.unit(), abs=1e-12)
    assert {round(Keyed(1).stream("v").uniform(10.0, 10.0), 9)} == {10.0}


def test_a_stream_shuffle_is_the_keyed_shuffle_of_its_label_and_position() -> None:
    items = list(range(12))
    keyed = Keyed(11)
    stream = keyed.stream("order")
    first, second = stream.shuffled(items), stream.shuffled(items)
    assert first == keyed.shuffled("order#0", items)
    assert second == keyed.shuffled("order#1", items)
    assert sorted(first) == items and first != second
    assert keyed.stream("other").shuffled(items) != first  # the label keys it
    assert stream.token() == keyed.token("order", 2)  # a shuffle moves the counter by one


def test_keyed_draws_at_their_edges() -> None:
    keyed = Keyed(11)
    u = keyed.unit("edge", 3)
    assert keyed.chance("edge", 3, u) is False  # unit < p: a draw equal to p is not a hit
    assert keyed.chance("edge", 3, math.nextafter(u, 1.0)) is True
    assert keyed.randint("r", 0, 5, 5) == 5  # a one-value range is that value
    for call, message in (
        (lambda: keyed.randint("r", 0, 5, 4), "empty range [5, 4]"),
        (lambda: keyed.choice("c", 0, []), "choice from an empty sequence"),
        (lambda: keyed.sample("s", [1, 2], 3), "sample of 3 from 2 items"),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == message
    items = list(range(40))
    for k in (0, 1, 5, 40):
        assert keyed.sample("s", items, k) == keyed.shuffled("s", items)[:k]
    assert keyed.sample("s", items, 5) != items[:5]


def test_stream_draws_at_their_edges() -> None:
    first = Keyed(12).stream("edge").unit()
    assert Keyed(12).stream("edge").chance(first) is False
    assert Keyed(12).stream("edge").chance(math.nextafter(first, 1.0)) is True
    assert Keyed(12).stream("r").randint(3, 3) == 3
    stream = Keyed(12).stream("bad")
    for call, message in (
        (lambda: stream.randint(5, 4), "empty range [5, 4]"),
        (lambda: stream.choice([]), "choice from an empty sequence"),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == message


def test_an_integer_index_draws_as_its_decimal_text_at_every_size() -> None:
    # The counter fast path must give the bytes the general path gives, up to its bounds.
    keyed = Keyed(13)
    for index in (0, 7, -7, 10**29, 10**30 - 1, 10**30, -(10**30) + 1, -(10**30), 10**31,
                  11**30, -(10**31), 10**40):  # fmt: skip
        assert keyed.unit("i", index) == keyed.unit("i", str(index)), index


def test_keyed_defaults_are_the_documented_ones() -> None:
    keyed = Keyed(14)
    assert keyed.unit("d") == keyed.unit("d", 0)
    assert keyed.tokens("t", 3) == [keyed.token("t", i, 12) for i in range(3)]
    assert all(len(t) == 12 for t in keyed.tokens("t", 3))
