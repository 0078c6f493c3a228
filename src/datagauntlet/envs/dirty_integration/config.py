"""Config and fault profiles of dirty-integration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from datagauntlet.core.config import EnvConfig

Profile = Literal["clean", "realistic", "hostile"]


@dataclass(frozen=True)
class FaultRates:
    """Per-request probabilities; `quota_factor` x pages needed is the never-resetting quota."""

    cursor_repeat: float
    type_drift: float
    timeout: float
    inflate_total: float  # chance a response's `total` is inflated
    quota_factor: float | None  # None: no quota (the clean API)


PROFILES: dict[str, FaultRates] = {
    "clean": FaultRates(0.0, 0.0, 0.0, 0.0, None),
    "realistic": FaultRates(0.12, 0.35, 0.10, 0.30, 2.0),
    "hostile": FaultRates(0.20, 0.55, 0.15, 1.00, 2.2),
}


@dataclass(frozen=True)
class DirtyIntegrationConfig(EnvConfig):
    profile: Profile = "realistic"
    num_records: int = 40
    page_size: int = 4
    # Seconds a timed-out request stalls over real HTTP (`datagauntlet serve`); 0 in process.
    http_timeout_seconds: float = 2.0

    def validate(self) -> None:
        if not 1 <= self.num_records <= 100_000:
            raise ValueError(f"num_records must be in 1..100000, got {self.num_records}")
        if not 1 <= self.page_size <= 1_000:
            raise ValueError(f"page_size must be in 1..1000, got {self.page_size}")
        if not 0 <= self.http_timeout_seconds <= 60:
            raise ValueError(
                f"http_timeout_seconds must be in 0..60, got {self.http_timeout_seconds}"
            )

    @property
    def rates(self) -> FaultRates:
        return PROFILES[self.profile]
