"""Benchmark figures shown as one readable table per benchmark (see run_all.py).

    report = Report("dirty-integration speed")
    report.add("careful, realistic", 5120.3, "episodes/s")
    report.add("HTTP GET /score round trip", 0.41, "ms", floor=0.12, floor_label="raw socket")
    report.show()

A floor is the same kind of figure measured in the same run for the cheapest thing that could
do the job (a bare socket round trip, an empty loop), so a figure reads against the machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Row:
    figure: str
    value: float | str
    unit: str = ""
    floor: float | None = None
    floor_label: str = ""


@dataclass
class Report:
    title: str
    notes: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)

    def add(
        self,
        figure: str,
        value: float | str,
        unit: str = "",
        floor: float | None = None,
        floor_label: str = "",
    ) -> None:
        self.rows.append(Row(figure, value, unit, floor, floor_label))

    def add_nested(self, prefix: str, values: Any) -> None:
        """Every number in a nested dict, one row each, named by its path."""
        if isinstance(values, dict):
            for key, value in values.items():
                self.add_nested(f"{prefix} {key}".strip(), value)
        elif isinstance(values, (int, float, str)) and not isinstance(values, bool):
            self.add(prefix, values)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def show(self) -> None:
        from rich.console import Console
        from rich.table import Table

        has_floor = any(r.floor is not None for r in self.rows)
        table = Table(title=self.title, caption="; ".join(self.notes) or None)
        table.add_column("figure")
        table.add_column("value", justify="right")
        table.add_column("unit")
        if has_floor:
            table.add_column("floor (same run)", justify="right")
            table.add_column("x floor", justify="right")
        for r in self.rows:
            cells = [r.figure, fmt(r.value), r.unit]
            if has_floor:
                if r.floor is None or isinstance(r.value, str):
                    cells += ["", ""]
                else:
                    label = f" ({r.floor_label})" if r.floor_label else ""
                    ratio = r.value / r.floor if r.floor else float("inf")
                    cells += [f"{fmt(r.floor)}{label}", f"{ratio:.1f}"]
            table.add_row(*cells)
        console = Console()
        if not console.is_terminal:
            console.width = max(console.width, 120)
        console.print(table)


def fmt(value: float | str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"
