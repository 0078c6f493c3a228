"""One attack of the escape battery (sandbox_battery.py gathers them all), and how a case
names the walls it is about."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Case:
    name: str
    group: str
    what: str  # one line for the docs table
    code: str
    stoppers: frozenset[str]
    needs: frozenset[str] = frozenset()
    setup: Callable[[Path, Any], None] | None = None
    limits: dict[str, float] = field(default_factory=dict)
    escaped: Callable[[Any, Path, Any], bool] | None = None  # (result, workspace, ctx)
    quiet: bool = False  # nothing to refuse: the wall removed what the attack looks for
    host: Callable[[], str] | None = None  # the host itself refuses it: why, or "" if not
    checked: frozenset[str] | None = None  # walls to take down and raise alone (default all)


def walls(*names: str) -> frozenset[str]:
    return frozenset(names)
