"""Core rules that survived planted bugs until these tests existed."""

from __future__ import annotations

import dataclasses

import pytest

from datagauntlet.core.action_log import GENESIS, ActionLog, _digest
from datagauntlet.core.score import Score
from datagauntlet.core.seeding import Keyed

WEIGHTS = {"a": 0.5, "b": 0.5}


@pytest.mark.parametrize(("given", "kept"), [(1.7, 1.0), (-0.4, 0.0), (0.25, 0.25)])
def test_score_caps_every_component_value_to_unit_range(given: float, kept: float) -> None:
    s = Score.build(WEIGHTS, {"a": given, "b": 1.0})
    assert s.components["a"]["value"] == kept
    assert s.reward == pytest.approx(0.5 * kept + 0.5)
    assert 0.0 <= s.reward <= 1.0


def _log_of(n: int) -> ActionLog:
    log = ActionLog()
    for i in range(n):
        entry = log.open_entry("tool", {"i": i})
        log.close_entry(entry, True, f"ok {i}")
    return log


def test_renumbered_entries_with_a_rehashed_chain_are_not_intact() -> None:
    """Every hash recomputed after renumbering is still a forgery: seq must equal position."""
    log = _log_of(3)
    assert log.chain_intact()
    prev = GENESIS
    for i, entry in enumerate(log.entries):
        entry.seq = i + 1
        entry.prev_hash = prev
        entry.hash = _digest(entry, entry.args_json)
        prev = entry.hash
    assert not log.chain_intact()


def test_entry_seq_is_its_position() -> None:
    log = _log_of(4)
    assert [e.seq for e in log.entries] == [0, 1, 2, 3]
    swapped = _log_of(2)
    a, b = swapped.entries
    swapped.entries = [dataclasses.replace(b), dataclasses.replace(a)]
    assert not swapped.chain_intact()


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


def test_a_score_as_a_dict_names_its_three_parts() -> None:
    s = Score.build(WEIGHTS, {"a": 1.0, "b": 0.5}, {"m": 3})
    out = s.as_dict()
    assert out["reward"] == s.reward == 0.75
    assert out["components"] == s.components and out["metrics"] == {"m": 3}
