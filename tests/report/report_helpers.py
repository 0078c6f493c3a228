"""Real runs for the report tests: `datagauntlet eval --agent` and `calibrate --json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "datagauntlet.cli.main"]


def cli(*args: str, check: bool = True, **kw: Any) -> subprocess.CompletedProcess[str]:
    kw.setdefault("env", os.environ)
    proc = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=240, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args}: rc {proc.returncode}\n{proc.stderr[-2000:]}")
    return proc


def eval_run(out: Path, env: str, agent: str, n: int = 4, *config: str) -> Path:
    cli("eval", "--env", env, "--agent", agent, "-n", str(n), "--out", str(out), *config)
    return out


def records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
