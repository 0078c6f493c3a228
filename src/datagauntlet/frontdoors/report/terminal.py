"""`datagauntlet show`: one trajectory in the terminal, folded like the HTML viewer."""

from __future__ import annotations

import json
from typing import Any

from datagauntlet.frontdoors.report.runs import Run
from datagauntlet.frontdoors.report.stats import reward_lost

FOLD = 1_200


def _fold(text: str, full: bool) -> str:
    if full or len(text) <= FOLD:
        return text
    return text[:FOLD] + f"\n… {len(text) - FOLD:,} more characters (use --full)"


def _pretty(arguments: Any) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(arguments)


def _task_key(r: Any) -> str:
    """A public task's seed, or the ref a held-out task's run saved instead."""
    return f"seed {r.seed}" if r.seed is not None else f"ref {r.ref}"


def show(run: Run, index: int, full: bool = False) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    if not 0 <= index < len(run.rollouts):
        raise ValueError(
            f"--rollout {index} is out of range: {run.name} has rollouts 0..{len(run.rollouts) - 1}"
        )
    r = run.rollouts[index]
    console = Console(highlight=False)
    head = Table.grid(padding=(0, 2))
    for key, value in (
        ("run", f"{run.name} ({run.kind}, {run.env}, model {run.model})"),
        ("task", f"{r.task_id} rollout {r.rollout} ({_task_key(r)}, split {r.split})"),
        ("reward", f"{r.reward:.4f}"),
        ("status", r.status + (f": {r.error}" if r.error else "")),
        ("stop", str(r.stop)),
        ("failure code", str(r.failure_code or "-")),
    ):
        head.add_row(f"[bold]{key}[/]", escape(value))
    console.print(Panel(head, title=f"rollout {index}", expand=False))
    lost = Table(title="where the reward was lost", show_edge=False)
    for col in ("component", "value", "weight", "lost"):
        lost.add_column(col, justify="left" if col == "component" else "right")
    for row in reward_lost(r, run.weights):
        lost.add_row(
            row["component"], f"{row['value']:.4f}", f"{row['weight']:.2f}", f"{row['lost']:.4f}"
        )
    console.print(lost)
    colours = {"system": "grey62", "user": "yellow", "assistant": "cyan", "tool": "green"}
    for n, m in enumerate(r.messages):
        role = str(m.get("role", "?"))
        parts = []
        if m.get("content"):
            parts.append(escape(_fold(str(m["content"]), full)))
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            args = escape(_fold(_pretty(fn.get("arguments")), full))
            parts.append(f"[bold]→ {escape(str(fn.get('name')))}[/]\n{args}")
        title = f"{n} {role}" + (f" · {m['tool_call_id']}" if m.get("tool_call_id") else "")
        console.print(
            Panel(
                "\n".join(parts) or "[dim](empty)[/]",
                title=title,
                title_align="left",
                border_style=colours.get(role, "white"),
            )
        )
