"""The per-tool-call path against its floors, measured side by side in one run.

Each figure is paired with the cheapest code that does the same job without the episode
(its floor), timed interleaved call by call, so a loaded machine moves both:

- `fetch_page` (dirty-integration, hostile profile): one `Episode.call`, against a floor of
  the page lookup, building the page's records, one canonical JSON line of the call (arguments
  and result) and one sha256 of it.
- `run_sql` (bad-batch-gate): the careful policy's queries, each through `Episode.call` on a
  fresh episode, against the same query in raw SQLite (a copy of the same database, no
  authorizer, no limits).
- the careful policy over 100,000 records, page size 100: world set-up, the play and the
  score, CPU seconds; the play's floor is the same policy logic calling the bare API
  (`Api.fetch`, no episode, no log, no argument checks), then the grader on its submission;
  the world's floor is raw blake2b, one digest a draw it makes (5 a record, 1 a page).
- memory of the submission: tracemalloc's peak while `submit_records` runs, against the size
  of the submitted list itself.

Used by bench_dirty_integration.py and bench_bad_batch_gate.py; `python toolpath.py` prints
the figures alone.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sqlite3
import statistics
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any

from benchlib import blake2b_floor

import datagauntlet as dg
from datagauntlet.envs.dirty_integration.api import Api
from datagauntlet.envs.dirty_integration.grader import grade
from datagauntlet.envs.dirty_integration.policies import coerce_amount

BIG_RECORDS = 100_000
BIG_PAGE = 100


def load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


@dataclass
class Pair:
    """A median cost per call and its floor's, in microseconds, from one interleaved run."""

    value_us: float
    floor_us: float

    @property
    def ratio(self) -> float:
        return self.value_us / self.floor_us


def _log_line(tool: str, args: dict[str, Any], result: dict[str, Any]) -> str:
    line = json.dumps(
        {"tool": tool, "args": args, "result": result},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(line.encode()).hexdigest()


def _floor_fetch(world: Any, cursor: str | None) -> str | None:
    """The least a fetch_page can do: find the page, build its records, log one hashed line."""
    page = 0 if cursor is None else world.page_of_cursor[cursor]
    records = [
        {"id": r.id, "amount": r.amount, "customer": r.customer, "created_at": r.created_at}
        for r in world.page(page)
    ]
    last = page == world.pages_needed - 1
    nxt = None if last else world.cursors[page + 1]
    body = {"records": records, "next_cursor": nxt, "total": len(world.records)}
    _log_line("fetch_page", {"cursor": cursor}, body)
    return nxt


def fetch_page_cost(tasks: int = 300, calls: int = 12) -> Pair:
    env = dg.make("dirty-integration", profile="hostile")
    ours: list[int] = []
    floor: list[int] = []
    clock = time.perf_counter_ns
    for task in env.tasks("eval", tasks):
        ep = env.episode(task)
        world = ep.world
        cursor = floor_cursor = None
        for i in range(calls):
            for which in (0, 1) if i % 2 else (1, 0):  # alternate who runs first
                start = clock()
                if which:
                    page = ep.call("fetch_page", {"cursor": cursor})
                    ours.append(clock() - start)
                    cursor = page.get("next_cursor", cursor)
                else:
                    floor_cursor = _floor_fetch(world, floor_cursor)
                    floor.append(clock() - start)
        ep.close()
    return Pair(statistics.median(ours) / 1000, statistics.median(floor) / 1000)


class _Recorder:
    def __init__(self, ep: Any) -> None:
        self.ep = ep
        self.queries: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ep, name)

    def call(self, name: str, args: Any = None) -> dict[str, Any]:
        if name == "run_sql":
            self.queries.append(args["query"])
        return self.ep.call(name, args)


def run_sql_cost(rounds: int = 3) -> Pair:
    env = dg.make("bad-batch-gate")
    plans = []
    for task in env.tasks("eval"):
        ep = env.episode(task)
        rec = _Recorder(ep)
        env.policies()["careful"](rec)  # type: ignore[arg-type]
        ep.close()
        plans.append((task, rec.queries))
    ours: list[int] = []
    floor: list[int] = []
    clock = time.perf_counter_ns
    for _ in range(rounds):
        for task, queries in plans:
            ep = env.episode(task)
            raw = sqlite3.connect(":memory:", isolation_level=None)
            ep.world.conn.backup(raw)  # the same data, with no authorizer and no limits
            for i, query in enumerate(queries):
                for which in (0, 1) if i % 2 else (1, 0):  # alternate who runs first
                    start = clock()
                    if which:
                        ep.call("run_sql", {"query": query})
                    else:
                        raw.execute(query).fetchall()
                    (ours if which else floor).append(clock() - start)
            raw.close()
            ep.close()
    return Pair(statistics.median(ours) / 1000, statistics.median(floor) / 1000)


@dataclass
class BigRun:
    records: int
    page_size: int
    world_s: float
    play_s: float
    score_s: float
    floor_play_s: float
    floor_score_s: float
    reward: float
    floor_world_s: float = 0.0  # raw blake2b, one digest a draw the world makes

    @property
    def total_s(self) -> float:
        return self.world_s + self.run_s

    @property
    def floor_total_s(self) -> float:
        return self.floor_world_s + self.floor_s

    @property
    def run_s(self) -> float:
        return self.play_s + self.score_s

    @property
    def floor_s(self) -> float:
        return self.floor_play_s + self.floor_score_s


def _careful_on_bare_api(api: Api) -> list[dict[str, Any]]:
    """The careful policy's own logic, calling the API with no episode around it."""
    kept: dict[str, Any] = {}
    cursor = None
    while True:
        status, page = api.fetch(cursor)
        if status != 200:
            if status == 429:
                break
            continue
        for r in page["records"]:
            kept.setdefault(r["id"], coerce_amount(r["amount"]))
        if page["next_cursor"] is None:
            break
        cursor = page["next_cursor"]
    return [{"id": k, "amount": v} for k, v in kept.items()]


def careful_big(records: int = BIG_RECORDS, page_size: int = BIG_PAGE) -> BigRun:
    env = dg.make("dirty-integration", num_records=records, page_size=page_size)
    task = env.tasks("eval", 1)[0]
    cpu = time.process_time
    start = cpu()
    ep = env.episode(task)
    world_s = cpu() - start
    start = cpu()
    env.policies()["careful"](ep)
    play_s = cpu() - start
    start = cpu()
    reward = ep.score().reward
    score_s = cpu() - start
    world = ep.world
    as_dicts = bool(ep.submission) and isinstance(ep.submission[0], dict)  # older episodes
    ep.close()
    api = Api(world)
    start = cpu()
    sent = _careful_on_bare_api(api)
    # The least the env keeps of a submission: the grader's (id, amount) pairs.
    submitted: list[Any] = sent if as_dicts else [(r["id"], r["amount"]) for r in sent]
    floor_play_s = cpu() - start
    world.__dict__.pop("truth", None)  # the grader's lookup table, built again as score did
    start = cpu()
    grade(world, api, submitted, api.requests + 1)
    floor_score_s = cpu() - start
    # The world draws 4 hashes a record (name, name, day, amount), an id token a record and a
    # cursor token a page: no world of these records can be made with fewer digests.
    floor_world_s = blake2b_floor(5 * records + world.pages_needed)
    return BigRun(
        records,
        page_size,
        world_s,
        play_s,
        score_s,
        floor_play_s,
        floor_score_s,
        reward,
        floor_world_s,
    )


@dataclass
class SubmitMemory:
    records_bytes: int  # the submitted list itself: list, dicts, ids and amounts
    peak_bytes: int  # tracemalloc's peak while submit_records ran, the list included
    held_bytes: int  # what the episode still holds for the submission once the call is done

    @property
    def ratio(self) -> float:
        return self.peak_bytes / self.records_bytes


def submit_memory(records: int = BIG_RECORDS) -> SubmitMemory:
    env = dg.make("dirty-integration", num_records=records, page_size=1000)
    ep = env.episode(env.tasks("eval", 1)[0])
    source = [(r.id, r.amount) for r in ep.world.records]
    gc.collect()
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    # Fresh strings, as a door's JSON parse or an agent's own collection would hold them.
    submitted = [{"id": "".join(i), "amount": a} for i, a in source]
    own, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    ep.call("submit_records", {"records": submitted})
    _, peak = tracemalloc.get_traced_memory()
    del submitted
    gc.collect()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ep.close()
    return SubmitMemory(own - base, peak - base, held - base)


def main() -> None:
    print(f"load average {load()} (pid {os.getpid()})")
    fp = fetch_page_cost()
    print(f"fetch_page: {fp.value_us:.2f} us, floor {fp.floor_us:.2f} us, {fp.ratio:.2f}x")
    sql = run_sql_cost()
    print(f"run_sql: {sql.value_us:.2f} us, floor {sql.floor_us:.2f} us, {sql.ratio:.2f}x")
    big = careful_big()
    print(
        f"careful 100k/page 100: world {big.world_s:.3f} s, play {big.play_s:.3f} s, "
        f"score {big.score_s:.3f} s; floor play {big.floor_play_s:.3f} s, "
        f"score {big.floor_score_s:.3f} s; run/floor {big.run_s / big.floor_s:.2f}x, "
        f"reward {big.reward}"
    )
    mem = submit_memory()
    mib = 2**20
    print(
        f"submit memory: records {mem.records_bytes / mib:.1f} MiB, peak {mem.peak_bytes / mib:.1f}"
        f" MiB ({mem.ratio:.2f}x), held after {mem.held_bytes / mib:.1f} MiB"
    )
    print(f"load average {load()}")


if __name__ == "__main__":
    main()
