"""The HTML report at scale: 10,000 rollouts, its size and how fast a browser opens it.

The rollouts are real `eval --agent naive` records of dirty-integration, repeated under new task
ids to reach the count. Floors, measured in the same run: the same browser opening a page that
holds only plotly.js (what every report must load), and the size of plotly.js plus the
trajectories gzip-compressed (what the file cannot be smaller than).
"""

from __future__ import annotations

import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "report"))

ROLLOUTS = 10_000
BASE_TASKS = 50


def main() -> None:
    from benchlib import Report
    from report_cdp import Browser, find_browser

    from datagauntlet.frontdoors.report.html import write_report
    from datagauntlet.frontdoors.report.runs import load_runs

    work = Path(tempfile.mkdtemp(prefix="dg-bench-report-"))
    base = work / "base"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "datagauntlet.cli.main",
            "eval",
            "--env",
            "dirty-integration",
            "--agent",
            "naive",
            "-n",
            str(BASE_TASKS),
            "--out",
            str(base),
        ],
        check=True,
        capture_output=True,
    )
    seed_records = [json.loads(x) for x in (base / "results.jsonl").read_text().splitlines()]
    big = work / "big"
    big.mkdir()
    with (big / "results.jsonl").open("w") as fh:
        for i in range(ROLLOUTS):
            r = dict(seed_records[i % len(seed_records)])
            r["task_id"] = f"eval-{i // 4:05d}"
            r["rollout"] = i % 4
            fh.write(json.dumps(r) + "\n")
    start = time.perf_counter()
    runs = load_runs([str(big)])
    out = work / "report.html"
    size = write_report(runs, out)
    build_s = time.perf_counter() - start

    from plotly.offline import get_plotlyjs

    plotly_js = get_plotlyjs()
    floor_page = work / "floor.html"
    floor_page.write_text(
        f"<html><body><script>{plotly_js}</script><script>document.body.dataset.ready='1'"
        "</script></body></html>"
    )
    messages = json.dumps([r.messages for r in runs[0].rollouts]).encode()
    floor_size = len(plotly_js.encode()) + len(gzip.compress(messages, 6))

    exe = find_browser()
    report = Report("report: 10,000 rollouts")
    report.add("report file, 10,000 rollouts", size / 1e6, "MB", floor_size / 1e6, "plotly + gzip")
    report.add("build the report", build_s, "s")
    if exe is None:
        report.note("no Chromium here: open times not measured (apt-get install chromium)")
        report.show()
        return
    browser = Browser(exe)
    try:
        ready = "document.body.dataset.ready === '1'"
        opens = [browser.open(out.as_uri(), ready, timeout=60) for _ in range(3)]
        floors = [browser.open(floor_page.as_uri(), ready, timeout=60) for _ in range(3)]
        ours, floor = statistics.median(opens), statistics.median(floors)
        report.add("open in Chromium until usable (median of 3)", ours, "s", floor, "plotly page")
        browser.open(out.as_uri(), ready, timeout=60)
        t0 = time.monotonic()
        browser.click("#rollouts-table tbody tr[data-i='0']")
        browser.wait_for("document.querySelectorAll('#messages .message').length > 0", 30)
        report.add("open one trajectory", time.monotonic() - t0, "s")
    finally:
        browser.close()
    report.show()


if __name__ == "__main__":
    main()
