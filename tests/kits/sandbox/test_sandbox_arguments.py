"""run_script's and Limits' arguments: each bad one refused, saying what is wrong."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox_runner_helpers import root_only

from datagauntlet.kits.sandbox import WALLS, Limits, run_script


def test_bad_arguments_are_clear_errors(tmp_path: Path) -> None:
    known = ", ".join(WALLS)
    with pytest.raises(ValueError) as caught:
        run_script("pass", tmp_path, walls=("process", "moat", "ditch"))
    assert str(caught.value) == f"unknown sandbox wall(s) in walls: moat, ditch; known: {known}"
    with pytest.raises(ValueError) as caught:
        run_script("pass", tmp_path, require=("moat",))
    assert str(caught.value) == f"unknown sandbox wall(s) in require: moat; known: {known}"
    with pytest.raises(ValueError, match=r"^required walls not requested: seccomp$"):
        run_script("pass", tmp_path, walls=("process",), require=("seccomp",))
    with pytest.raises(ValueError, match=r"^required walls not requested: audit, seccomp$"):
        run_script("pass", tmp_path, walls=("process",), require=("seccomp", "process", "audit"))
    with pytest.raises(ValueError, match=r"^sandbox code must be text or a path, got int$"):
        run_script(5, tmp_path)  # type: ignore[arg-type]
    with pytest.raises(ValueError) as caught:
        run_script(tmp_path / "nope.py", tmp_path)
    missing = tmp_path / "nope.py"
    assert str(caught.value) == f"cannot read the script {missing}: No such file or directory"
    with pytest.raises(ValueError) as caught:
        Limits(output_bytes=100, flood_bytes=99)
    assert str(caught.value) == "sandbox limit flood_bytes must be at least output_bytes"
    assert Limits(output_bytes=100, flood_bytes=100).flood_bytes == 100
    with pytest.raises(ValueError, match="not a directory"):
        run_script("pass", tmp_path / "missing")
    with pytest.raises(ValueError, match="must be positive"):
        Limits(timeout_s=0)
    with pytest.raises(ValueError, match="must be a number"):
        Limits(memory_mb=True)  # type: ignore[arg-type]


@root_only
def test_an_unreachable_workspace_is_refused_with_a_hint(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    (locked / "ws").mkdir(parents=True)
    os.chmod(locked, 0o700)
    with pytest.raises(ValueError) as caught:
        run_script("pass", locked / "ws")
    hint = "run it in fresh_workspace(...) or under a directory others can enter"
    assert str(caught.value).endswith(hint)
