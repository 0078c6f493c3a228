"""The Python sandbox kit: run agent-written code behind six walls, each measured and reported.

    from datagauntlet.kits.sandbox import GRADED, fresh_workspace, run_script
    with fresh_workspace(episode_workspace) as ws:
        res = run_script(ws / "fix.py", ws, GRADED, require=WALLS)
    res.ok, res.exit_code, res.stdout, res.violations, res.walls

See docs/sandbox.md for the walls, the escape battery and the measured speed.
"""

from __future__ import annotations

from datagauntlet.kits.sandbox.limits import EXPLORE, GRADED, Limits
from datagauntlet.kits.sandbox.result import SandboxResult, Violation
from datagauntlet.kits.sandbox.runner import run_script
from datagauntlet.kits.sandbox.toolset import PythonToolset
from datagauntlet.kits.sandbox.walls import WALLS, WallsUnavailable
from datagauntlet.kits.sandbox.workspace import fresh_workspace

__all__ = [
    "EXPLORE",
    "GRADED",
    "WALLS",
    "Limits",
    "PythonToolset",
    "SandboxResult",
    "Violation",
    "WallsUnavailable",
    "fresh_workspace",
    "run_script",
]
