"""A world's records, made in bulk, equal the one-draw-at-a-time definition."""

from __future__ import annotations

import pytest

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.dirty_integration.config import DirtyIntegrationConfig
from datagauntlet.envs.dirty_integration.world import _FIRST, _LAST, Record, World


def one_at_a_time(seed: int, n: int) -> list[Record]:
    keyed = Keyed(seed)
    s = keyed.stream("records")
    out = []
    for i in range(n):
        rid = "rec_" + keyed.token("record-id", i, 12)
        name = f"{s.choice(_FIRST)} {s.choice(_LAST)}"
        day = s.randint(1, 28)
        out.append(Record(rid, s.randint(1, 9_999), name, f"2026-09-{day:02d}"))
    return out


@pytest.mark.parametrize(("seed", "n"), [(0, 1), (1, 2), (7, 40), (2**62 + 3, 1_001)])
def test_records_equal_the_stream_definition(seed: int, n: int) -> None:
    world = World(seed, DirtyIntegrationConfig(num_records=n))
    assert world.records == one_at_a_time(seed, n)


def test_bulk_tokens_and_draws_equal_their_single_forms() -> None:
    keyed = Keyed("s")
    assert keyed.tokens("t", 50, 9) == [keyed.token("t", i, 9) for i in range(50)]
    stream = keyed.stream("d")
    assert keyed.draws("d", 30) == [stream._draw() for _ in range(30)]
