"""One format for every benchmark: each figure next to its floor measured in the same run.

A script declares its figures at module level, so they can be read without timing anything
(the README's speed block is checked against these declarations):

    FIGURES = (
        Figure("http-score", "HTTP GET /score round trip", "ms", floor="bare socket echo",
               max_ratio=4),
        Figure("episodes", "careful episodes per second", "episodes/s", better="higher"),
    )

    report = Report("dirty-integration speed", FIGURES)
    report.add("http-score", 0.41, floor=0.12)
    report.add("episodes", 5120.3)
    report.show()

A floor is the same kind of figure for the cheapest thing that could do the job (a bare socket
round trip, raw SQLite, an empty loop), measured in the same run so a loaded machine moves both.
`x floor` is always a cost ratio, >= 1 when ours is slower: value / floor for figures where
lower is better (times, bytes), floor / value where higher is better (rates). A target is an
absolute bound (`target`, in the figure's unit) and/or a bound on the ratio (`max_ratio`).

`show()` prints the table with the load average at the start and end of the script, and with
$DATAGAUNTLET_BENCH_JSON set, appends the report as one JSON line to that file (`run_all.py
--json` collects every script's; `run_all.py --write-docs` renders them into docs/speed.md).
Rows added under a name that is not declared are shown but never reach docs/speed.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

JSON_ENV = "DATAGAUNTLET_BENCH_JSON"


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    unit: str
    floor: str = ""  # what the floor is; "" for a figure without one
    better: str = "lower"  # "lower" (times, sizes) or "higher" (rates)
    target: float | None = None  # bound on the value, in `unit`
    max_ratio: float | None = None  # bound on x floor

    def __post_init__(self) -> None:
        if self.better not in ("lower", "higher"):
            raise ValueError(f"{self.key}: better must be 'lower' or 'higher'")
        if self.max_ratio is not None and not self.floor:
            raise ValueError(f"{self.key}: a ratio target needs a floor")

    def ratio(self, value: float, floor: float | None) -> float | None:
        if floor is None or not self.floor:
            return None
        if self.better == "lower":
            return value / floor if floor else math.inf
        return floor / value if value else math.inf

    def target_text(self) -> str:
        parts = []
        if self.target is not None:
            op = "<=" if self.better == "lower" else ">="
            parts.append(f"{op} {fmt(self.target)} {self.unit}".rstrip())
        if self.max_ratio is not None:
            parts.append(f"<= {fmt(self.max_ratio)}x floor")
        return ", ".join(parts)

    def verdict(self, value: float, floor: float | None) -> str:
        """'met', 'NOT met', or '' when the figure has no target."""
        if self.target is None and self.max_ratio is None:
            return ""
        ok = True
        if self.target is not None:
            ok &= value <= self.target if self.better == "lower" else value >= self.target
        if self.max_ratio is not None:
            ratio = self.ratio(value, floor)
            ok &= ratio is not None and ratio <= self.max_ratio
        return "met" if ok else "NOT met"


@dataclass
class Row:
    key: str  # the declared figure's key, "" for an undeclared row
    label: str
    value: float | str | None  # None: declared but not measured in this run
    unit: str = ""
    floor: float | None = None
    floor_label: str = ""
    ratio: float | None = None
    target: str = ""
    verdict: str = ""


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


@dataclass
class Report:
    title: str
    figures: tuple[Figure, ...] = ()
    notes: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    load_start: str = field(default_factory=load_average)

    def __post_init__(self) -> None:
        keys = [f.key for f in self.figures]
        if len(set(keys)) != len(keys):
            raise ValueError(f"{self.title}: figure keys repeat: {keys}")
        self._declared = {f.key: f for f in self.figures}

    def add(
        self,
        figure: str,
        value: float | str,
        unit: str = "",
        floor: float | None = None,
        floor_label: str = "",
    ) -> None:
        """A declared figure by its key (unit and floor label come from the declaration), or an
        undeclared row by its label."""
        decl = self._declared.get(figure)
        if decl is None:
            ratio = value / floor if floor and not isinstance(value, str) else None
            self.rows.append(Row("", figure, value, unit, floor, floor_label, ratio))
            return
        if any(r.key == figure for r in self.rows):
            raise ValueError(f"{self.title}: figure {figure!r} added twice")
        if isinstance(value, str):
            raise TypeError(f"{figure}: a declared figure is a number, got {value!r}")
        if floor is not None and not decl.floor:
            raise ValueError(f"{figure}: declared without a floor, but one was given")
        self.rows.append(
            Row(
                decl.key,
                decl.label,
                value,
                decl.unit,
                floor,
                decl.floor,
                decl.ratio(value, floor),
                decl.target_text(),
                decl.verdict(value, floor),
            )
        )

    def add_nested(self, prefix: str, values: Any) -> None:
        """Every number in a nested dict, one undeclared row each, named by its path."""
        if isinstance(values, dict):
            for key, value in values.items():
                self.add_nested(f"{prefix} {key}".strip(), value)
        elif isinstance(values, (int, float, str)) and not isinstance(values, bool):
            self.add(prefix, values)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def all_rows(self) -> list[Row]:
        """The rows in the order shown: declared figures in declaration order (those not
        measured in this run as such), then undeclared rows in the order added."""
        measured = {r.key: r for r in self.rows if r.key}
        out = [measured.get(d.key) or unmeasured(d) for d in self.figures]
        return out + [r for r in self.rows if not r.key]

    def as_dict(self) -> dict[str, Any]:
        return {
            "script": Path(sys.argv[0]).stem,
            "title": self.title,
            "load_start": self.load_start,
            "load_end": load_average(),
            "notes": self.notes,
            "rows": [asdict(r) for r in self.all_rows()],
        }

    def show(self) -> None:
        from rich.console import Console
        from rich.table import Table

        data = self.as_dict()
        caption = [f"load average {data['load_start']} at start, {data['load_end']} at end"]
        table = Table(title=self.title, caption="; ".join(caption + self.notes))
        for name in ("figure", "value", "unit", "floor (same run)", "x floor", "target", ""):
            table.add_column(name, justify="right" if name in ("value", "x floor") else "left")
        for r in self.all_rows():
            table.add_row(*row_cells(r))
        console = Console()
        if not console.is_terminal:
            console.width = max(console.width, 140)
        console.print(table)
        path = os.environ.get(JSON_ENV)
        if path:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(data) + "\n")


def unmeasured(decl: Figure) -> Row:
    return Row(decl.key, decl.label, None, decl.unit, floor_label=decl.floor,
               target=decl.target_text())  # fmt: skip


def row_cells(r: Row) -> list[str]:
    """figure, value, unit, floor (with what it is), x floor, target, verdict: as printed."""
    value = "not measured" if r.value is None else fmt(r.value)
    floor = ""
    if r.floor is not None:
        floor = f"{fmt(r.floor)} ({r.floor_label})" if r.floor_label else fmt(r.floor)
    elif r.floor_label and r.value is not None:
        floor = f"not measured ({r.floor_label})"
    ratio = fmt_ratio(r.ratio)
    return [r.label, value, r.unit, floor, ratio, r.target, r.verdict]


def fmt_ratio(ratio: float | None) -> str:
    if ratio is None:
        return ""
    return "inf" if math.isinf(ratio) else f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.0f}x"


def fmt(value: float | str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def blake2b_floor(n: int) -> float:
    """CPU seconds for `n` raw keyed blake2b digests read as ints: the cheapest way to draw,
    the floor of every generator's figures."""
    head = hashlib.blake2b(digest_size=8, person=b"datagauntlet")
    head.update(b"\x05\x00\x00\x00floor")
    copy, from_bytes = head.copy, int.from_bytes
    start = time.process_time()
    for i in range(n):
        h = copy()
        h.update(b"%d" % i)
        from_bytes(h.digest(), "little")
    return time.process_time() - start
