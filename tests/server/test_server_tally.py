"""The tally the workers of one server share: the session limit counted over every worker's
row, a dead worker's seats given back, and no two workers taking the last seat at once."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from datagauntlet.frontdoors.server.tally import Tally


@pytest.fixture()
def tallies(tmp_path: Path):
    path = str(tmp_path / "tally")
    sup = Tally.create(path, 3)
    workers = [Tally.attach(path, 3, i) for i in range(3)]
    yield sup, workers
    for t in (sup, *workers):
        t.close()


def test_the_limit_counts_every_workers_seats(tallies) -> None:
    sup, (a, b, c) = tallies
    assert a.hold(3) and b.hold(3) and b.hold(3)
    assert not a.hold(3) and not c.hold(3)  # 3 seats taken, by two workers
    b.release()
    assert c.hold(3) and not a.hold(3)
    assert sup.total("held") == 3


def test_a_dead_workers_seats_come_back_and_its_counts_carry_on(tallies) -> None:
    sup, (a, b, _) = tallies
    for _ in range(2):
        assert b.hold(2)
    b.publish(open_now=2, created=7, reaped=1)
    assert not a.hold(2)
    assert sup.died(1) == 2  # the sessions it held
    assert a.hold(2) and sup.total("open") == 0
    sup.started(1, pid=4242, restarts=1)
    assert b.counts() == (7, 1)  # a restarted worker goes on counting from there
    row = sup.rows()[1]
    assert row["pid"] == 4242 and row["restarts"] == 1 and not row["ready"]


def test_release_never_goes_below_zero(tallies) -> None:
    _, (a, _, _) = tallies
    a.release(5)
    assert a.total("held") == 0 and a.hold(1)


def _grab(path: str, index: int, tries: int, out: multiprocessing.Queue, start: object) -> None:
    t = Tally.attach(path, 4, index)
    start.wait(30)  # type: ignore[attr-defined]  # all four at once
    out.put(sum(t.hold(50) for _ in range(tries)))
    t.close()


def test_workers_racing_for_seats_never_take_more_than_the_limit(tmp_path: Path) -> None:
    path = str(tmp_path / "tally")
    sup = Tally.create(path, 4)
    ctx = multiprocessing.get_context("spawn")
    out, start = ctx.Queue(), ctx.Barrier(4)
    procs = [ctx.Process(target=_grab, args=(path, i, 40, out, start)) for i in range(4)]
    for p in procs:
        p.start()
    got = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
    assert sum(got) == 50 == sup.total("held")  # 160 tries at once, exactly 50 seats
    sup.close()


def test_one_process_needs_no_file() -> None:
    t = Tally.local()
    assert t.hold(1) and not t.hold(1)
    t.mark_ready()
    assert t.rows()[0]["ready"] and t.index == 0


def test_the_world_budget_counts_every_workers_bytes(tallies) -> None:
    sup, (a, b, _) = tallies
    assert a.hold_bytes(600, 1000) is None and b.hold_bytes(300, 1000) is None
    assert a.hold_bytes(200, 1000) == 900  # refused: what every worker holds already
    a.release_bytes(600)
    assert b.hold_bytes(700, 1000) is None and sup.total("world_bytes") == 1000
    sup.died(1)  # a dead worker's bytes come back
    assert sup.total("world_bytes") == 0 and a.hold_bytes(1000, 1000) is None
    assert sup.rows()[0]["world_bytes"] == 1000
