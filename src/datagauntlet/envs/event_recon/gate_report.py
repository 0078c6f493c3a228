"""The full gate run of event-recon, kept as a file the README's gate table is rendered from.

    python -m datagauntlet.envs.event_recon.gate_report [--workers 2] [--write]

runs every gate row (the shared ones and event-recon's own) over the 120 public tasks and
writes `docs/envs/event-recon-gates.json`: the rows, and each policy's reward per task. A test
renders the README table from that file, and replays a sample of its tasks to check the
per-task rewards are still what the code produces, so neither can drift from the code.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPORT = Path(__file__).resolve().parents[4] / "docs" / "envs" / "event-recon-gates.json"
BEGIN = "<!-- gates:event-recon -->"
END = "<!-- /gates:event-recon -->"


def run(workers: int = 1, split: str = "public", n: int | None = None) -> dict[str, Any]:
    from datagauntlet.core.gates import SHARED_GATES, GateRun
    from datagauntlet.core.registry import make

    env = make("event-recon")
    g = GateRun(env, split, n, workers)
    start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for gate in (*SHARED_GATES, *env.extra_gates()):
        out = gate.run(g)
        for r in [out] if hasattr(out, "as_dict") else list(out):
            rows.append(r.as_dict())
    per_task = {
        policy: {r.task["id"]: r.reward for r in g.results(policy)} for policy in env.policies()
    }
    return {
        "env": env.id,
        "split": split,
        "tasks": len(g.tasks),
        "workers": workers,
        "seconds": round(time.perf_counter() - start, 1),
        "ok": all(r["ok"] for r in rows),
        "rows": rows,
        "per_task": per_task,
    }


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def table(report: dict[str, Any]) -> str:
    lines = ["| gate | value | bound | ok |", "|---|---:|---|:---:|"]
    for r in report["rows"]:
        ok = "yes" if r["ok"] else "**no**"
        lines.append(f"| {r['name']} | {_cell(r['value'])} | {r['bound']} | {ok} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--split", default="public")
    parser.add_argument("-n", type=int, default=None, help="first N tasks (default: all)")
    parser.add_argument("--write", action="store_true", help=f"write {REPORT.name}")
    args = parser.parse_args(argv)
    report = run(args.workers, args.split, args.n)
    if args.write:
        REPORT.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    print(table(report))
    print(f"\n{report['tasks']} tasks, {report['seconds']} s, --workers {args.workers}")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
