"""The fitted ceilings of event-recon's gates: computed from measured figures, never copied.

    python -m datagauntlet.envs.event_recon.gates.fit_ceilings [--report PATH] [--write]

fits each ceiling on the per-task figures of a full gate run (by default the committed
`docs/envs/event-recon-gates.json`, which `gate_report --write` produces) and, with `--write`,
stores them with the sample they name in `ceilings.json` beside this file, the one place
`gates.py` reads them from, and renders their table into docs/envs/event-recon.md. The
ceilings are drift detectors, not security bounds (what bounds adversarial reward is the
workspace-only policies solving nothing and invariant 7's share):

- `sweep`: the highest reward of the one-family sweep over every family and task;
- `attacker_ledger_mean`: the highest split-wide mean ledger component of a shipped
  workspace-only policy;
- `attacker_ledger_tier`: the highest per-tier mean of the same.

Each ceiling is its measured maximum plus `MARGIN` of it (at least `MARGIN_FLOOR`), rounded up
to `STEP`. A fit names its sample (split and task count), the date, the commit of the code
that produced the figures and a digest of the figures themselves, so a test can check the
stored ceilings are what this fit computes from the committed run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from datagauntlet.core.user_files import load_json_file

CEILINGS = Path(__file__).with_name("ceilings.json")
DOCS = Path(__file__).resolve().parents[5] / "docs" / "envs" / "event-recon.md"
REPORT = DOCS.with_name("event-recon-gates.json")  # the full public run (gate_report --write)
MAX_REPORT_BYTES = 16 << 20  # a full run is ~120 KB; a larger file is a wrong path
BEGIN, END = "<!-- ceilings:start -->", "<!-- ceilings:end -->"
MARGIN = 0.25  # a quarter above the measured maximum ...
MARGIN_FLOOR = 0.01  # ... and at least this much above it
STEP = 0.01  # rounded up to a whole step
NAMES = ("sweep", "attacker_ledger_mean", "attacker_ledger_tier")


def ceiling(measured: float) -> float:
    """The measured maximum with its margin, rounded up to `STEP`."""
    raw = max(measured * (1 + MARGIN), measured + MARGIN_FLOOR)
    return round(math.ceil(round(raw / STEP, 9)) * STEP, 10)


def attacker_names() -> tuple[str, ...]:
    from datagauntlet.envs.event_recon.attacks.attackers import policies

    return tuple(sorted(policies()))


def measured(report: Mapping[str, Any], attackers: Sequence[str] | None = None) -> dict[str, float]:
    """The maxima the ceilings are fitted to, from a gate run's per-task figures."""
    names = attacker_names() if attackers is None else tuple(attackers)
    sweep = [v for by_task in report["sweep"].values() for v in by_task.values()]
    means: list[float] = []
    tier_means: list[float] = []
    for name in names:
        ledger = report["ledger"][name]
        means.append(statistics.fmean(ledger.values()))
        for tier in sorted(set(report["tiers"].values())):
            values = [v for t, v in ledger.items() if report["tiers"][t] == tier]
            tier_means.append(statistics.fmean(values))
    return {
        "sweep": round(max(sweep), 4),
        "attacker_ledger_mean": round(max(means), 4),
        "attacker_ledger_tier": round(max(tier_means), 4),
    }


def figures_digest(report: Mapping[str, Any], attackers: Sequence[str] | None = None) -> str:
    """A digest of exactly the figures a fit reads."""
    names = attacker_names() if attackers is None else tuple(attackers)
    figures = {
        "sweep": report["sweep"],
        "ledger": {n: report["ledger"][n] for n in names},
        "tiers": report["tiers"],
    }
    text = json.dumps(figures, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _commit() -> str:
    root = Path(__file__).resolve().parents[5]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head or "unknown"


def fit(
    report: Mapping[str, Any], on: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """The stored record: the ceilings, what they were fitted to, and the sample they name."""
    values = measured(report)
    return {
        "sample": f"{report['split']}, {report['tasks']} tasks",
        "fitted": on or dt.date.today().isoformat(),
        "code": code or _commit(),
        "figures": figures_digest(report),
        "attackers": list(attacker_names()),
        "margin": {"relative": MARGIN, "floor": MARGIN_FLOOR, "step": STEP},
        "measured": values,
        "ceilings": {name: ceiling(values[name]) for name in NAMES},
    }


def load(path: Path = CEILINGS) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(path.read_text())
    return record


def markdown(record: Mapping[str, Any]) -> str:
    """The docs table of a stored fit: each line, what it was fitted to, and the sample."""
    lines = [
        f"Fitted {record['fitted']} on {record['sample']} (commit {record['code']}; figures "
        f"sha256 {record['figures'][:12]}), over {', '.join(record['attackers'])}:",
        "",
        "| ceiling | measured maximum | fitted line |",
        "|---|---:|---:|",
    ]
    for name in NAMES:
        lines.append(
            f"| `{name}` | {record['measured'][name]:.4f} | {record['ceilings'][name]:g} |"
        )
    return "\n".join(lines)


def docs_block(text: str) -> str:
    _, sep, rest = text.partition(BEGIN)
    body, sep2, _ = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"no {BEGIN} ... {END} block")
    return body.strip("\n")


def render_docs(record: Mapping[str, Any], path: Path = DOCS) -> None:
    text = path.read_text()
    docs_block(text)
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{BEGIN}\n{markdown(record)}\n{END}{tail}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--report", type=Path, default=REPORT, help="a gate run's JSON file")
    parser.add_argument("--write", action="store_true", help=f"store the fit in {CEILINGS.name}")
    args = parser.parse_args(argv)
    try:
        report = load_json_file(args.report, MAX_REPORT_BYTES, "gate run")
        record = fit(report)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"fit_ceilings: cannot fit on {args.report}: {exc!r}", file=sys.stderr)
        return 2
    if report.get("split") != "public" or report.get("tasks") != 120:
        print("fit_ceilings: ceilings are fitted on the full public split only", file=sys.stderr)
        return 2
    text = json.dumps(record, indent=1, sort_keys=True) + "\n"
    if args.write:
        CEILINGS.write_text(text)
        render_docs(record)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
