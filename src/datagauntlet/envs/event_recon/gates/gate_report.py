"""The full gate run of event-recon, kept as a file its docs page's gate table is rendered from.

    python -m datagauntlet.envs.event_recon.gates.gate_report [--workers 2] [--write] [--render]
    python -m datagauntlet.envs.event_recon.gates.gate_report --split private [--secret-file PATH]
        [--write [--out PATH]]

runs every gate row (the shared ones and event-recon's own) over the 120 public tasks. With
`--write` it writes `docs/envs/event-recon-gates.json` (the rows; each policy's reward and
ledger component per task; each sweep family's and cheap attack's reward per task; the tiers;
the time each gate took) and re-renders the table in `docs/envs/event-recon.md` from it.
`--render` only re-renders the table from the committed file.

`--split private` gates the held-out split for the secret given at run time (`--secret-file`,
or `DATAGAUNTLET_SECRET` / `DATAGAUNTLET_SECRET_FILE`); with `--write` it writes the whole
split's figures to `docs/envs/event-recon-gates-private.json` (or `--out`): the same rows and
per-task figures, keyed by task id, and the secret's public name (`seeding.secret_id`). Neither
the secret nor any task seed is written, so the figures can be published.

`tests/event_recon/test_er_gate_report.py` checks that the page's table is what the file
renders, that each row is what the file's per-task figures add up to, and replays a sample of
tasks to check those per-task figures are the code's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from datagauntlet.core.gates import GateRun

ROOT = Path(__file__).resolve().parents[5]
REPORT = ROOT / "docs" / "envs" / "event-recon-gates.json"  # = fit_ceilings.REPORT
PRIVATE_REPORT = ROOT / "docs" / "envs" / "event-recon-gates-private.json"
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
        "canary": env.canary,  # the file is an exported record of every task it names
        "split": split,
        **_secret_field(split),
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


def _secret_field(split: str) -> dict[str, str]:
    from datagauntlet.core import seeding

    return {"secret_id": seeding.secret_id()} if seeding.is_held_out(split) else {}


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def table(report: dict[str, Any]) -> str:
    """The page block: one line of provenance, then every row with its bound."""
    passing = sum(1 for r in report["rows"] if r["ok"])
    load = report.get("loadavg") or [None, None]
    secret = f" (secret {report['secret_id']})" if report.get("secret_id") else ""
    lines = [
        f"{report['tasks']} {report['split']}{secret} tasks, {passing} of {len(report['rows'])} "
        "rows "
        f"passing; {report['seconds']:.0f} s with --workers {report['workers']} "
        f"(load average {load[0]} at the start, {load[1]} at the end).",
        "",
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


def rejudge(report: dict[str, Any]) -> dict[str, Any]:
    """The run with its fitted-ceiling rows (the sweep's maximum, each workspace-only policy's
    mean lines) judged again against `ceilings.json`, from the run's own per-task figures: what
    a new run of the same code would give, after `fit_ceilings --write` moved the lines."""
    from datagauntlet.envs.event_recon.gates import gates as er_gates
    from datagauntlet.envs.event_recon.gates.row import Row

    ids = list(report["tiers"])
    fresh: dict[str, dict[str, Any]] = {}
    for name, ledger in report["ledger"].items():
        if name not in er_gates.fit_ceilings.attacker_names():
            continue
        results = [(report["per_task"][name][i], {"ledger_correctness": ledger[i]}) for i in ids]
        tiers = [report["tiers"][i] for i in ids]
        for row in er_gates.attacker_rows(name, tiers, results):
            fresh[row.name] = asdict(row)
    high = max(v for by_task in report["sweep"].values() for v in by_task.values())
    line = er_gates.SWEEP_CEILING
    fresh["sweep-max"] = asdict(Row("sweep-max", round(high, 4), f"<= {line:g}", high <= line))
    rows = [dict(fresh.get(r["name"], r)) for r in report["rows"]]
    return {**report, "rows": rows, "ok": all(r["ok"] for r in rows)}


def render_page(report: dict[str, Any], path: Path = PAGE) -> None:
    text = path.read_text()
    page_block(text)  # both markers present, or ValueError
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{BEGIN}\n{table(report)}\n{END}{tail}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--split", default="public", help="split to gate (default public)")
    parser.add_argument("-n", type=int, default=None, help="first N tasks (default: all)")
    parser.add_argument(
        "--write",
        action="store_true",
        help=f"write {REPORT.name} and its table ({PRIVATE_REPORT.name} for private)",
    )
    parser.add_argument("--out", type=Path, default=None, help="with --write: the file to write")
    parser.add_argument(
        "--secret-file", default=None, help="the held-out secret (else DATAGAUNTLET_SECRET)"
    )
    parser.add_argument(
        "--render",
        action="store_true",
        help=f"only re-render the table in {PAGE.name} from {REPORT.name}",
    )
    parser.add_argument(
        "--rejudge",
        action="store_true",
        help=f"re-judge {REPORT.name}'s fitted-ceiling rows against ceilings.json, and re-render",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


def _refusal(args: argparse.Namespace) -> str | None:
    """Why these arguments cannot run, or None."""
    from datagauntlet.core import seeding

    if args.workers < 1 or (args.n is not None and args.n < 1):
        return "--workers and -n must be >= 1"
    if args.write and args.n is not None:
        return "--write records a whole split only"
    if args.write and args.split not in ("public", "private"):
        return "--write records the public or the private split only"
    if args.out is not None and not args.write:
        return "--out goes with --write"
    if args.out is not None and args.split == "public":
        return "--out is for the private split (public writes the committed file and page)"
    if seeding.is_held_out(args.split):
        try:
            if args.secret_file:
                seeding.use_secret_file(args.secret_file)
            seeding.secret_id()
        except seeding.SecretMissing as exc:
            return str(exc)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.render or args.rejudge:
        try:
            report = rejudge(load()) if args.rejudge else load()
            if args.rejudge:
                REPORT.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
            render_page(report)
        except (OSError, ValueError) as exc:
            print(f"gate_report: {exc}", file=sys.stderr)
            return 2
        return 0
    problem = _refusal(args)
    if problem:
        print(f"gate_report: {problem}", file=sys.stderr)
        return 2
    report = run(args.workers, args.split, args.n)
    if args.write:
        path = REPORT if args.split == "public" else (args.out or PRIVATE_REPORT)
        path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
        if args.split == "public":
            render_page(report)
    if args.json:
        print(json.dumps(report, sort_keys=True))
    else:
        print(table(report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
