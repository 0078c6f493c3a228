"""`datagauntlet report`: one self-contained HTML file for any number of runs."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "report"
HELP = (
    "Write one offline HTML report of eval output directories, `calibrate --json` files and "
    "vf-eval traces.jsonl files: summaries, plots, breakdowns, side-by-side runs, a per-task "
    "table and a trajectory viewer."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN", help="a run directory or file")
    parser.add_argument(
        "-o", "--out", default="report.html", metavar="FILE", help="output (default report.html)"
    )


def run(args: argparse.Namespace) -> int:
    try:
        import plotly  # noqa: F401
    except ImportError:
        raise ValueError("the report needs plotly: pip install 'datagauntlet[report]'") from None
    from datagauntlet.frontdoors.report.html import write_report
    from datagauntlet.frontdoors.report.runs import load_runs

    runs = load_runs(args.runs)
    out = Path(args.out)
    if out.exists() and not out.is_file():
        raise ValueError(f"--out {out} exists and is not a regular file")
    size = write_report(runs, out)
    rollouts = sum(len(r.rollouts) for r in runs)
    print(f"wrote {out} ({size / 1e6:.1f} MB): {len(runs)} run(s), {rollouts} rollout(s)")
    return 0
