"""The types a gate row is made of, below the env and the gate runner that both use them.

`Environment.extra_gates()` returns `Gate`s and `core/gates.py` runs them; keeping the types
here lets the env name them without importing the runner that imports the env.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class GateResult:
    name: str
    value: float | int | str | None
    bound: str
    ok: bool

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "bound": self.bound, "ok": self.ok}


class GateInputs(Protocol):
    """What a gate reads: the env, the split, its tasks and each policy's results, played once
    and shared by every row (`core.gates.GateRun`)."""

    env: Any
    split: str

    @property
    def tasks(self) -> list[Any]: ...

    def results(self, policy: str) -> list[Any]: ...

    def rewards(self, policy: str) -> list[float]: ...


@dataclass(frozen=True)
class Gate:
    name: str
    run: Callable[[Any], GateResult | Sequence[GateResult]]  # called with a GateInputs
