"""`PythonToolset`: the `run_python` tool, each call in a fresh copy of the workspace."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from datagauntlet.core.toolset import ToolError, Toolset, params, tool
from datagauntlet.kits.sandbox.limits import EXPLORE, Limits
from datagauntlet.kits.sandbox.result import SandboxResult
from datagauntlet.kits.sandbox.runner import run_script
from datagauntlet.kits.sandbox.runtime import runtime
from datagauntlet.kits.sandbox.walls import WALLS, WallsUnavailable
from datagauntlet.kits.sandbox.workspace import fresh_workspace

SHOWN_AS = "/workspace"  # the copy's real path varies per call; the agent sees this instead
MAX_CODE_CHARS = 200_000


def _description(ts: PythonToolset) -> str:
    return (
        "Run Python 3.11 code (standard library only, no network, no subprocesses) in a fresh "
        "copy of the workspace: it can read the workspace files and write scratch files, but "
        "writes are discarded after the call. "
        f"Limits: {ts.limits.timeout_s:g} s, {ts.limits.memory_mb} MB. "
        "Returns exit_code, stdout, stderr, timed_out, truncated and violations."
    )


def _schema(ts: PythonToolset) -> dict[str, Any]:
    return params(
        {
            "code": {
                "type": "string",
                "maxLength": MAX_CODE_CHARS,
                "description": "the Python source to run, as a script",
            }
        }
    )


class PythonToolset(Toolset):
    """Runs agent code in the sandbox. `workspace` is a directory (or a function returning
    one, for envs whose workspace is made when the episode opens); each call copies it."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] | Callable[[], Path],
        limits: Limits = EXPLORE,
        *,
        walls: Iterable[str] = WALLS,
        require: Iterable[str] = (),
    ) -> None:
        self._workspace = workspace
        self.limits = limits
        self.walls = tuple(walls)
        self.require = tuple(require)
        self.runs = 0
        self.violations = 0

    def open(self) -> None:
        runtime()  # build the interpreter copy now, not inside the agent's first call

    def close(self) -> None:
        """Nothing to release: each call's copy is removed when the call ends."""

    @property
    def workspace(self) -> Path:
        ws = self._workspace
        return Path(ws() if callable(ws) else ws)

    @tool(_description, _schema, mutates=False)
    def run_python(self, code: str) -> dict[str, Any]:
        try:
            with fresh_workspace(self.workspace) as ws:
                res = run_script(
                    code,
                    ws,
                    self.limits,
                    walls=self.walls,
                    require=self.require,
                    filename="<run_python>",
                )
        except WallsUnavailable as exc:
            raise ToolError(str(exc)) from None
        self.runs += 1
        self.violations += len(res.violations)
        self.note(sandbox_walls=list(res.walls), sandbox_violations=len(res.violations))
        return agent_view(res, str(ws))


def agent_view(res: SandboxResult, real_root: str) -> dict[str, Any]:
    """What an agent is shown: no timings and no host paths, so the same code gets the same
    answer in every replay."""

    scratch = os.path.dirname(real_root) + "/"

    def clean(text: str) -> str:
        return text.replace(real_root, SHOWN_AS).replace(scratch, "/")

    return {
        "exit_code": res.exit_code,
        "stdout": clean(res.stdout),
        "stderr": clean(res.stderr),
        "timed_out": res.timed_out,
        "truncated": res.truncated,
        "violations": [clean(f"{v.wall}: {v.event} {v.detail}".strip()) for v in res.violations],
    }
