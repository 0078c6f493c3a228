"""The hidden truth of one task (its records) and the API's fault schedule.

Every fault is a pure function of (task seed, request index): a retry never shifts a later
fault. Disruptive faults (timeouts and cursor repeats, which each waste one request) are capped
at quota - pages, so an agent that wastes nothing else always finishes inside the quota; that
cap is what keeps every seed winnable.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import NamedTuple

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.dirty_integration.config import DirtyIntegrationConfig

_FIRST = ("Ada", "Bo", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ines", "Jun")
_LAST = ("Okafor", "Lind", "Park", "Silva", "Novak", "Haddad", "Moreau", "Sato", "Quinn", "Berg")
# Every "First Last" and every day a record can have, written once (not once a record).
_NAMES = tuple(tuple(f"{first} {last}" for last in _LAST) for first in _FIRST)
_DAYS = tuple(f"2026-09-{day:02d}" for day in range(1, 29))


class Record(NamedTuple):
    """A tuple, so 100,000 of them are cheap to build and encode as JSON arrays directly."""

    id: str
    amount: int
    customer: str
    created_at: str


class Faults(NamedTuple):  # a tuple: built once per request, cheaper than a frozen dataclass
    timeout: bool
    cursor_repeat: bool
    type_drift: bool
    inflate_by: int  # 0: the total is honest


class World:
    def __init__(self, seed: int, config: DirtyIntegrationConfig) -> None:
        self.seed = seed
        self.config = config
        self.keyed = Keyed(seed)
        self.records = self._make_records()
        self.pages_needed = max(1, math.ceil(len(self.records) / config.page_size))
        factor = config.rates.quota_factor
        self.quota: int | None = None if factor is None else math.ceil(factor * self.pages_needed)
        # Cursor tokens: opaque, page order not recoverable from them.
        self.cursors = [self.keyed.token("cursor", i, 16) for i in range(self.pages_needed)]
        self.page_of_cursor = {c: i for i, c in enumerate(self.cursors)}
        self._disruptive_before: list[int] = [0]
        # Whether each request's timeout / cursor repeat fires: pure in (seed, request), so
        # worked out once per request although the schedule asks for each several times.
        self._timeout_fires: dict[int, bool] = {}
        self._repeat_fires: dict[int, bool] = {}

    def _make_records(self) -> list[Record]:
        """Per record i: its id token, then stream draws 4i..4i+3 of "records" (first name,
        last name, day, amount), the order a `Stream` would take them in; made in bulk."""
        n = self.config.num_records
        ids = self.keyed.tokens("record-id", n, 12)
        d = self.keyed.draws("records", 4 * n)
        nf, nl = len(_FIRST), len(_LAST)
        names = [_NAMES[a % nf][b % nl] for a, b in zip(d[0::4], d[1::4], strict=True)]
        days = [_DAYS[x % 28] for x in d[2::4]]
        amounts = [1 + x % 9_999 for x in d[3::4]]
        ids = ["rec_" + rid for rid in ids]
        return list(map(Record._make, zip(ids, amounts, names, days, strict=True)))

    @cached_property
    def truth(self) -> dict[str, int]:
        return {r.id: r.amount for r in self.records}

    def page(self, index: int) -> list[Record]:
        size = self.config.page_size
        return self.records[index * size : (index + 1) * size]

    # --- the fault schedule ------------------------------------------------------------------
    def _raw(self, label: str, request: int, p: float) -> bool:
        return p > 0 and self.keyed.chance(label, request, p)

    def _disruptive_count(self, request: int) -> int:
        """Disruptive faults that fired at indices < request (cached, pure in (seed, index))."""
        counts = self._disruptive_before
        while len(counts) <= request:
            r = len(counts) - 1
            counts.append(counts[-1] + int(self._fires_timeout(r) or self._fires_repeat(r)))
        return counts[request]

    def _slack(self) -> float:
        return math.inf if self.quota is None else self.quota - self.pages_needed

    def _fires_timeout(self, request: int) -> bool:
        fires = self._timeout_fires.get(request)
        if fires is None:
            fires = self._raw("timeout", request, self.config.rates.timeout) and (
                self._disruptive_count(request) < self._slack()
            )
            self._timeout_fires[request] = fires
        return fires

    def _fires_repeat(self, request: int) -> bool:
        fires = self._repeat_fires.get(request)
        if fires is None:
            fires = (
                not self._fires_timeout(request)
                and self._raw("cursor-repeat", request, self.config.rates.cursor_repeat)
                and self._disruptive_count(request) < self._slack()
            )
            self._repeat_fires[request] = fires
        return fires

    def faults(self, request: int) -> Faults:
        rates = self.config.rates
        inflate = 0
        if self._raw("inflate-total", request, rates.inflate_total):
            inflate = self.keyed.randint("inflate-by", request, 1, max(2, self.pages_needed))
        return Faults(
            self._fires_timeout(request),
            self._fires_repeat(request),
            self._raw("type-drift", request, rates.type_drift),
            inflate,
        )
