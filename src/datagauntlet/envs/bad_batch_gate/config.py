"""Config of bad-batch-gate: generated families or a cases file in the original's format."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from datagauntlet.core.config import EnvConfig

Families = Literal["standard", "extended"]


@dataclass(frozen=True)
class BadBatchGateConfig(EnvConfig):
    # A JSONL file of cases in the original project's format; None: generated cases.
    cases: str | None = None
    # "extended" adds partial loads, multi-defect batches and x100 unit errors under the cap.
    families: Families = "standard"
    # Model turns a front door allows per episode (in process, a call cap stops runaways).
    max_turns: int = 30

    def validate(self) -> None:
        if not 1 <= self.max_turns <= 1_000:
            raise ValueError(f"max_turns must be in 1..1000, got {self.max_turns}")
        if self.cases is not None:
            if not Path(self.cases).is_file():
                raise ValueError(f"cases file {self.cases!r} does not exist")
            if self.families != "standard":
                raise ValueError("families applies to generated cases; drop it or drop cases")
