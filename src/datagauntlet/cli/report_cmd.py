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
    parser.add_argument("--force", action="store_true", help="replace an existing --out file")


def run(args: argparse.Namespace) -> int:
    try:
        import plotly  # noqa: F401
    except ImportError:
        raise ValueError("the report needs plotly: pip install 'datagauntlet[report]'") from None
    from datagauntlet.core.output_files import check_output, input_files
    from datagauntlet.frontdoors.report.html import write_report
    from datagauntlet.frontdoors.report.runs import RUN_FILES, load_runs

    out = Path(args.out)
    inputs = input_files(args.runs, RUN_FILES)
    check_output(out, inputs, args.force)  # before the work, not after it
    runs = load_runs(args.runs)
    size = write_report(runs, out, inputs, args.force)
    rollouts = sum(len(r.rollouts) for r in runs)
    print(f"wrote {out} ({size / 1e6:.1f} MB): {len(runs)} run(s), {rollouts} rollout(s)")
    return 0
