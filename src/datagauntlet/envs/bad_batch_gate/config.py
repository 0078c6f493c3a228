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

    def validate(self) -> None:
        if self.cases is not None:
            if not Path(self.cases).is_file():
                raise ValueError(f"cases file {self.cases!r} does not exist")
            if self.families != "standard":
                raise ValueError("families applies to generated cases; drop it or drop cases")
