"""Run every benchmark script in this folder, each in its own process, and print its tables
(`make bench`). A script that fails is reported and makes the run exit 1; the others still run.

    python benchmarks/run_all.py [NAME ...]             # all scripts, or only bench_NAME...
    python benchmarks/run_all.py --json runs/bench.jsonl  # also keep every report as JSON
    python benchmarks/run_all.py --write-docs runs/bench.jsonl   # docs/speed.md's block from that

`--write-docs` (old name `--write-readme`) runs nothing: it rewrites, between docs/speed.md's
`bench:start` and `bench:end` markers, the section of every script found in the JSON (one
table each, in the scripts' declared order); sections of scripts not in the JSON are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))

from benchlib import JSON_ENV, Report, Row, fmt, fmt_ratio  # noqa: E402

PAGE = here.parent / "docs" / "speed.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
INTRO = (
    "Written by `python benchmarks/run_all.py --write-docs FILE` from one run of "
    "`python benchmarks/run_all.py --json FILE` (`make bench` prints the same tables). Each "
    "floor is the cheapest way to do the same job, measured in the same run, so a loaded "
    "machine moves both; `x floor` is the cost ratio (>= 1 when ours is slower). Each section "
    "gives the machine's load average while it ran: figures are timings on a 2-core machine "
    "shared with other work, not a promise."
)
SECTION = "#### "
HEADER = "| figure | ours | floor (same run) | x floor | target |\n|---|---:|---:|---:|---|"


def main(folder: Path = here, names: list[str] | None = None, json_out: Path | None = None) -> int:
    summary = Report("make bench: every benchmark")
    failed = 0
    env = dict(os.environ)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text("")
        env[JSON_ENV] = str(json_out.resolve())
    for script in sorted(folder.glob("bench_*.py")):
        if names and script.stem not in names and script.stem.removeprefix("bench_") not in names:
            continue
        print(f"\n== {script.stem} ==", flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(script)], env=env)
        seconds = time.perf_counter() - start
        failed += code != 0
        summary.add(script.stem, "ok" if code == 0 else f"FAILED (exit {code})", "")
        summary.add(f"{script.stem} wall time", seconds, "s")
    print()
    summary.show()
    return 1 if failed else 0


# --- the speed page's block ---------------------------------------------------------------------


def markdown_row(r: dict[str, Any]) -> str:
    row = Row(**r)
    value = "not measured" if row.value is None else f"{fmt(row.value)} {row.unit}".rstrip()
    floor = ""
    if row.floor is not None:
        floor = f"{fmt(row.floor)} {row.unit}".rstrip()
        floor += f" ({row.floor_label})" if row.floor_label else ""
    elif row.floor_label:
        floor = f"not measured ({row.floor_label})"
    target = f"{row.target}: {row.verdict}" if row.target and row.verdict else row.target
    cells = [row.label, value, floor, fmt_ratio(row.ratio), target]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def render_section(report: dict[str, Any]) -> str:
    rows = [markdown_row(r) for r in report["rows"] if r["key"]]
    head = (
        f"{SECTION}`{report['script']}`: {report['title']} "
        f"(load average {report['load_start']} at start, {report['load_end']} at end)"
    )
    section = "\n".join([head, "", HEADER, *rows])
    if report["notes"]:
        section += "\n\n" + "; ".join(report["notes"]).rstrip(".") + "."
    return section


def split_sections(block: str) -> dict[str, str]:
    """The block's sections by script name (`#### `bench_x`: ...` up to the next one)."""
    out: dict[str, str] = {}
    name = None
    for line in block.splitlines():
        if line.startswith(SECTION + "`"):
            name = line[len(SECTION) + 1 :].split("`", 1)[0]
            out[name] = line
        elif name is not None:
            out[name] += "\n" + line
    return {k: v.strip("\n") for k, v in out.items()}


def page_block(text: str) -> str:
    if START not in text or END not in text:
        raise ValueError(f"the page has no {START} ... {END} block")
    return text.split(START, 1)[1].split(END, 1)[0]


def write_page(results: Path, page: Path = PAGE, folder: Path = here) -> list[str]:
    """Rewrite the sections of the scripts in `results`; return the names rewritten."""
    reports = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        if line.strip():
            report = json.loads(line)
            if any(r["key"] for r in report["rows"]):
                reports[report["script"]] = report
    text = page.read_text(encoding="utf-8")
    sections = split_sections(page_block(text))
    sections.update({name: render_section(r) for name, r in reports.items()})
    order = [p.stem for p in sorted(folder.glob("bench_*.py"))]
    ordered = sorted(sections, key=lambda n: (order.index(n) if n in order else len(order), n))
    body = "\n\n".join([INTRO, *(sections[n] for n in ordered)])
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    page.write_text(f"{before}{START}\n{body}\n{END}{after}", encoding="utf-8")
    return sorted(reports)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only these scripts (bench_NAME or NAME)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="keep every report here")
    parser.add_argument("--write-docs", "--write-readme", type=Path, metavar="FILE",
                        help="render docs/speed.md's block from FILE; run nothing")  # fmt: skip
    args = parser.parse_args()
    if args.write_docs is not None:
        try:
            written = write_page(args.write_docs)
        except (OSError, ValueError, KeyError) as exc:
            print(f"run_all.py: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
        print(f"{PAGE.name} speed block: rewrote {', '.join(written) or 'nothing'}")
        raise SystemExit(0)
    raise SystemExit(main(names=args.names, json_out=args.json))
