"""The score of an episode: named, weighted components plus zero-weight metrics.

One `Weights` mapping per env is the single source of truth for names and weights; every
front door (verifiers rewards, eval summaries, docs tables) reads it from here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

REWARD_DIGITS = 6
# What every score is stamped with (`Episode.score`): scores with different stamps come from
# different code or different tasks and are not comparable (docs/versioning.md).
STAMP_FIELDS = ("package", "env", "env_version", "generator_version", "task_hash")


def check_weights(weights: Mapping[str, float]) -> None:
    total = sum(weights.values())
    if not math.isclose(total, 1.0, abs_tol=1e-9):
        raise ValueError(f"component weights must sum to 1, got {total}")
    if any(w <= 0 for w in weights.values()):
        raise ValueError("component weights must be positive")


@dataclass(frozen=True)
class Score:
    reward: float
    components: dict[str, dict[str, float]]
    metrics: dict[str, Any] = field(default_factory=dict)
    stamp: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        weights: Mapping[str, float],
        values: Mapping[str, float],
        metrics: Mapping[str, Any] | None = None,
    ) -> Score:
        """Combine component values (each clamped to [0, 1]) with their weights."""
        missing = set(weights) - set(values)
        extra = set(values) - set(weights)
        if missing or extra:
            raise ValueError(f"components differ from weights: missing {missing}, extra {extra}")
        components = {}
        reward = 0.0
        for name, weight in weights.items():
            value = min(1.0, max(0.0, float(values[name])))
            reward += value * weight
            components[name] = {"value": round(value, REWARD_DIGITS), "weight": weight}
        return cls(round(reward, REWARD_DIGITS), components, dict(metrics or {}))

    @classmethod
    def zero(cls, weights: Mapping[str, float], metrics: Mapping[str, Any] | None = None) -> Score:
        return cls.build(weights, dict.fromkeys(weights, 0.0), metrics)

    def stamped(self, stamp: Mapping[str, str]) -> Score:
        return dataclasses.replace(self, stamp=dict(stamp))

    def as_dict(self) -> dict[str, Any]:
        out = {"reward": self.reward, "components": self.components, "metrics": self.metrics}
        if self.stamp:
            out["stamp"] = self.stamp
        return out
