"""The full gate run of event-recon, kept as a file its docs page's gate table is rendered from.

    python -m datagauntlet.envs.event_recon.gate_report [--workers 2] [--write] [--render]

runs every gate row (the shared ones and event-recon's own) over the 120 public tasks. With
`--write` it writes `docs/envs/event-recon-gates.json` (the rows; each policy's reward and
ledger component per task; each sweep family's and cheap attack's reward per task; the tiers;
the time each gate took) and re-renders the table in `docs/envs/event-recon.md` from it.
`--render` only re-renders the table from the committed file.
`tests/event_recon/test_er_gate_report.py` checks that the page's table is what the file
renders, that each row is what the file's per-task figures add up to, and replays a sample
of tasks to check those per-task figures are the code's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datagauntlet.core.gates import GateRun

ROOT = Path(__file__).resolve().parents[4]
REPORT = ROOT / "docs" / "envs" / "event-recon-gates.json"
PAGE = ROOT / "docs" / "envs" / "event-recon.md"
BEGIN = "<!-- gates:event-recon -->"
END = "<!-- /gates:event-recon -->"
PLAY_ALL = "(every policy on every task)"  # the first timing: the play the gates then read


@dataclass
class RecordingRun(GateRun):
    """A GateRun that also keeps the per-task rewards of the sweep and of the cheap attacks
    (their gates fill them), which no policy of the env's list covers."""

    sweep: dict[str, dict[str, float]] = field(default_factory=dict)
    cheap: dict[str, dict[str, float]] = field(default_factory=dict)


def prefetch(g: GateRun, policies: Sequence[str]) -> None:
    """Play every policy on every task task-major, into the run's cache the gates read: a worker
    then builds each world once for all the policies (policy-major rebuilt it per policy, the
    world cache holding 16 of 120) and reuses the graded run of a script two probes share."""
    from datagauntlet.core.runner import ProcessMapper, play

    jobs = [(p, t) for t in g.tasks for p in policies]
    if g.workers <= 1:
        results = [play(g.env, p, t) for p, t in jobs]
    else:
        mapper = ProcessMapper(g.workers)
        try:
            config = g.env.config.as_dict()
            results = list(mapper.map([(g.env.id, config, p, t.full_dict()) for p, t in jobs]))
        finally:
            mapper.close()
    for policy in policies:
        g._results[policy] = [r for (p, _), r in zip(jobs, results, strict=True) if p == policy]


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def run(workers: int = 1, split: str = "public", n: int | None = None) -> dict[str, Any]:
    from datagauntlet.core.gates import SHARED_GATES
    from datagauntlet.core.registry import make
    from datagauntlet.envs.event_recon.splits import HELDOUT_SPLITS, heldout_status

    env = make("event-recon")
    g = RecordingRun(env, split, n, workers)
    load_start = _loadavg()
    start = time.perf_counter()
    prefetch(g, list(env.policies()))
    timings: dict[str, float] = {
        "(every policy on every task)": round(time.perf_counter() - start, 1)
    }
    rows: list[dict[str, Any]] = []
    for gate in (*SHARED_GATES, *env.extra_gates()):
        began = time.perf_counter()
        out = gate.run(g)
        timings[gate.name] = round(time.perf_counter() - began, 1)
        for r in [out] if hasattr(out, "as_dict") else list(out):
            rows.append(r.as_dict())
    results = {policy: g.results(policy) for policy in env.policies()}
    return {
        "env": env.id,
        "canary": env.canary,  # the gate JSON is an exported record of the tasks too
        "families": heldout_status() if split in HELDOUT_SPLITS else "the public twelve",
        "split": split,
        "tasks": len(g.tasks),
        "workers": workers,
        "seconds": round(time.perf_counter() - start, 1),
        "loadavg": [load_start, _loadavg()],
        "gate_seconds": timings,
        "ok": all(r["ok"] for r in rows),
        "rows": rows,
        "tiers": {t.id: env.tier_of(t) for t in g.tasks},  # type: ignore[attr-defined]
        "per_task": {p: {r.task["id"]: r.reward for r in rs} for p, rs in results.items()},
        "ledger": {
            p: {r.task["id"]: r.components["ledger_correctness"] for r in rs}
            for p, rs in results.items()
        },
        "sweep": g.sweep,
        "cheap": g.cheap,
    }


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def table(report: dict[str, Any]) -> str:
    """The page's block: one line of provenance, then every row with its bound."""
    passing = sum(1 for r in report["rows"] if r["ok"])
    load = report.get("loadavg") or [None, None]
    lines = [
        f"{report['tasks']} {report['split']} tasks, {passing} of {len(report['rows'])} rows "
        f"passing; {report['seconds']:.0f} s with --workers {report['workers']} "
        f"(load average {load[0]} at the start, {load[1]} at the end).",
        "",
        *(
            [report["families"], ""]
            if report.get("split") != "public" and "families" in report
            else []
        ),
        "| gate | value | bound | ok |",
        "|---|---:|---|:---:|",
    ]
    for r in report["rows"]:
        ok = "yes" if r["ok"] else "**no**"
        lines.append(f"| {r['name']} | {_cell(r['value'])} | {r['bound']} | {ok} |")
    return "\n".join(lines)


def load(path: Path = REPORT) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text())
    return report


def page_block(text: str) -> str:
    """The text between the page's gate-table markers (ValueError if they are missing)."""
    _, sep, rest = text.partition(BEGIN)
    body, sep2, _ = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"the page has no {BEGIN} ... {END} block")
    return body.strip("\n")


def render_page(report: dict[str, Any], path: Path = PAGE) -> None:
    text = path.read_text()
    page_block(text)  # both markers present, or ValueError
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{BEGIN}\n{table(report)}\n{END}{tail}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--split", default="public", help="split to gate (default public)")
    parser.add_argument("-n", type=int, default=None, help="first N tasks (default: all)")
    parser.add_argument(
        "--write", action="store_true", help=f"write {REPORT.name} and the table in {PAGE.name}"
    )
    parser.add_argument(
        "--render",
        action="store_true",
        help=f"only re-render the table in {PAGE.name} from {REPORT.name}",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if args.workers < 1 or (args.n is not None and args.n < 1):
        print("gate_report: --workers and -n must be >= 1", file=sys.stderr)
        return 2
    if args.render:
        try:
            render_page(load())
        except (OSError, ValueError) as exc:
            print(f"gate_report: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.write and (args.split != "public" or args.n is not None):
        print("gate_report: --write records the full public split only", file=sys.stderr)
        return 2
    report = run(args.workers, args.split, args.n)
    if args.write:
        REPORT.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
        render_page(report)
    if args.json:
        print(json.dumps(report, sort_keys=True))
    else:
        print(table(report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
