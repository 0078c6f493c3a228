"""Config of event-recon: the split filter and every limit, with the original's defaults.

These are the only place the limits live; the episode, the tools and every door read them
from here, so the defaults cannot drift between harness surfaces. `max_turns` (80) is the
base config's field, its default declared in registration.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from datagauntlet.core.config import EnvConfig
from datagauntlet.envs.event_recon.world.base_world import DEFAULT_SCALE, SCALE_RANGE

TIERS = (1, 2, 3, 4)


@dataclass(frozen=True)
class EventReconConfig(EnvConfig):
    # Restrict the split to one difficulty tier (None: all four).
    tier: int | None = None
    # Take the first N tasks after the tier filter (None: the whole split).
    num_tasks: int | None = None
    # Import path of a user's module supplying extra defect families and its own seeds.
    family_module: str | None = None
    # World size: 1.0 is the original's (about 3,055 partner projections over the 120 public
    # tasks, a tier-4 delivery stream of several read_file pages); rosters and distractors
    # grow with it, orders per partner do not.
    scale: float = DEFAULT_SCALE
    # Wall clock of the graded remediation script (its CPU limit is fixed at 60 s).
    script_timeout_seconds: float = 90.0
    # Rows one sql_query may return.
    sql_row_limit: int = 200
    # Bytes one sql_query response may carry: SQLite builds a cell of any width on request,
    # so the row bound alone does not bound a response.
    sql_response_bytes: int = 1_000_000
    # Wall clock of one sql_query.
    sql_timeout_seconds: float = 10.0
    # Bytes one read_file may return.
    read_bytes_limit: int = 120_000
    # Wall clock of one exploratory run_python.
    python_timeout_seconds: float = 30.0

    def validate(self) -> None:
        if self.tier is not None and self.tier not in TIERS:
            raise ValueError(f"tier must be one of 1, 2, 3, 4 or None, got {self.tier}")
        if self.num_tasks is not None and self.num_tasks < 1:
            raise ValueError(f"num_tasks must be >= 1 or None, got {self.num_tasks}")
        if self.family_module is not None and not self.family_module.strip():
            raise ValueError("family_module must be an import path such as mypkg.families")
        _in_range("scale", self.scale, *SCALE_RANGE)
        _in_range("script_timeout_seconds", self.script_timeout_seconds, 1.0, 600.0)
        _in_range("sql_row_limit", self.sql_row_limit, 1, 100_000)
        _in_range("sql_response_bytes", self.sql_response_bytes, 1_000, 100_000_000)
        _in_range("sql_timeout_seconds", self.sql_timeout_seconds, 0.1, 120.0)
        _in_range("read_bytes_limit", self.read_bytes_limit, 1_000, 10_000_000)
        _in_range("python_timeout_seconds", self.python_timeout_seconds, 1.0, 300.0)


def _in_range(name: str, value: float, lo: float, hi: float) -> None:
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be in {lo:g}..{hi:g}, got {value:g}")
