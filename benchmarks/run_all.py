"""Run every benchmark script in this folder, each in its own process, and print its tables
(`make bench`). A script that fails is reported and makes the run exit 1; the others still run
(one script's `raise SystemExit` used to end the whole run after the first)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))

from benchlib import Report  # noqa: E402


def main(folder: Path = here) -> int:
    summary = Report("make bench: every benchmark")
    failed = 0
    for script in sorted(folder.glob("bench_*.py")):
        print(f"\n== {script.stem} ==", flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(script)])
        seconds = time.perf_counter() - start
        failed += code != 0
        summary.add(script.stem, "ok" if code == 0 else f"FAILED (exit {code})", "")
        summary.add(f"{script.stem} wall time", seconds, "s")
    print()
    summary.show()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
