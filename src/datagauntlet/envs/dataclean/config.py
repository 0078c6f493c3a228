"""Config of the dataclean environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from datagauntlet.core.config import EnvConfig

FamilyName = Literal["crm", "orders", "inventory", "all"]
MAX_ROWS = 100_000
MAX_PREVIEWS = 20


@dataclass(frozen=True)
class DatacleanConfig(EnvConfig):
    family: FamilyName = "all"
    rows: int | None = None  # unique rows per table; None draws 10-18 per task
    previews: int = 0  # preview_program calls allowed per episode (0: the tool is absent)

    def validate(self) -> None:
        if self.rows is not None and not 1 <= self.rows <= MAX_ROWS:
            raise ValueError(f"rows must be in 1..{MAX_ROWS} or None, got {self.rows}")
        if not 0 <= self.previews <= MAX_PREVIEWS:
            raise ValueError(f"previews must be in 0..{MAX_PREVIEWS}, got {self.previews}")
