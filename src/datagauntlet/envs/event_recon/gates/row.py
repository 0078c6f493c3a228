"""A gate row of event-recon: a named figure with its bound, and its shape as a core gate result."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Row:
    name: str
    value: float | int | str
    bound: str
    ok: bool


def as_results(rows: Sequence[Row]) -> list[Any]:
    from datagauntlet.core.gates import GateResult

    return [GateResult(r.name, r.value, r.bound, r.ok) for r in rows]
