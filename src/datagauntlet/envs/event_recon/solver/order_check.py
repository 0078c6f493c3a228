"""Does remediation order matter? The reference's own fix, run with its steps swapped.

`outcome` plays the reference's reading on a task's workspace (no report is submitted),
renders its script twice, once in its own order (re-key, then rebook) and once the other way
round, runs each in a fresh copy of the task's `db.sqlite` and projects the ledger it leaves.
A task where the swapped script still lands the ledger has fixes that commute.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datagauntlet.envs.event_recon.grading.projection import project_ledger
from datagauntlet.envs.event_recon.solver.policy import prepare
from datagauntlet.envs.event_recon.solver.script import STEPS, render_script

SCRIPT_SECONDS = 60.0


@dataclass(frozen=True)
class Outcome:
    right_order_lands: bool
    wrong_order_lands: bool
    rekeys: int  # merged duplicates the fix re-keys


def ledger_after(world: Any, script: str) -> dict[str, dict[str, int]]:
    """The projection `script` leaves in a fresh copy of the world's database."""
    with tempfile.TemporaryDirectory(prefix="er-order-") as tmp:
        root = Path(tmp)
        (root / "db.sqlite").write_bytes(world.files["db.sqlite"])
        (root / "fix.py").write_text(script)
        subprocess.run(
            [sys.executable, "-I", "fix.py"],
            cwd=root,
            check=True,
            timeout=SCRIPT_SECONDS,
            capture_output=True,
        )
        return project_ledger(root / "db.sqlite", world.schema, world.partner_ids)


def outcome(env: Any, task: Any) -> Outcome:
    ep = env.episode(task)
    try:
        fix, _, _ = prepare(ep)
    finally:
        ep.close()
    world = env.world(task)
    right = ledger_after(world, render_script(fix)) == world.correct
    wrong = ledger_after(world, render_script(fix, tuple(reversed(STEPS)))) == world.correct
    return Outcome(right, wrong, len(fix.rekey))
