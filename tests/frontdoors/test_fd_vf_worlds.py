"""The world registry: keys nobody can guess, freed on demand, bounded in size and age."""

from __future__ import annotations

import pytest

import datagauntlet as dg
from datagauntlet.frontdoors.live import LiveEpisode
from datagauntlet.frontdoors.vf.worlds import WorldRegistry


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _live() -> LiveEpisode:
    env = dg.make("dirty-integration")
    return LiveEpisode.open_sync(env, env.tasks("eval", 1)[0])


def test_keys_are_long_random_and_distinct() -> None:
    reg = WorldRegistry()
    keys = [reg.put(_live()) for _ in range(20)]
    assert len(set(keys)) == 20
    assert all(len(k) >= 43 for k in keys)  # 256 bits, URL-safe base64


def test_pop_frees_and_unknown_keys_find_nothing() -> None:
    reg = WorldRegistry()
    live = _live()
    key = reg.put(live)
    assert reg.get(key).live is live  # type: ignore[union-attr]
    assert reg.get(key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert reg.pop(key).live is live  # type: ignore[union-attr]
    assert reg.get(key) is None and reg.pop(key) is None and len(reg) == 0


def test_size_bound_evicts_the_oldest() -> None:
    clock = Clock()
    reg = WorldRegistry(max_worlds=3, max_age=100, clock=clock)
    keys = []
    for _ in range(5):
        keys.append(reg.put(_live()))
        clock.now += 1
    assert len(reg) == 3 and reg.evicted == 2
    assert [reg.get(k) is not None for k in keys] == [False, False, True, True, True]


def test_age_bound_frees_worlds_never_scored() -> None:
    clock = Clock()
    reg = WorldRegistry(max_worlds=100, max_age=60, clock=clock)
    old = reg.put(_live())
    clock.now += 30
    mid = reg.put(_live())
    clock.now += 31  # `old` is now 61 s old
    assert reg.get(old) is None  # expired on lookup
    new = reg.put(_live())
    assert reg.get(mid) is not None and reg.get(new) is not None
    clock.now += 30  # `mid` is 61 s old; putting another world sweeps it
    reg.put(_live())
    assert len(reg) == 2 and reg.evicted == 2


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError):
        WorldRegistry(max_worlds=0)
    with pytest.raises(ValueError):
        WorldRegistry(max_age=0)
