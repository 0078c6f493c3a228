"""A sandbox run hands its workspace back: after it ends, times out, or the CLI running it is
terminated, no file in the workspace is owned by the run's throwaway uid; an empty workspace
path and an empty wall set are refused."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from datagauntlet.kits.sandbox import Limits, run_script
from datagauntlet.kits.sandbox.runtime import runtime

CLI = [sys.executable, "-m", "datagauntlet.cli.main", "sandbox", "run"]
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only root hands a workspace over")


def _owners(root: Path) -> set[int]:
    out = {os.lstat(root).st_uid}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            out.add(os.lstat(os.path.join(dirpath, name)).st_uid)
    return out


@pytest.fixture
def ws() -> Iterator[Path]:
    """A workspace the run's user can reach (pytest's own tmp is mode 700), used in place."""
    root = Path(tempfile.mkdtemp(dir=runtime().scratch))
    (root / "sub").mkdir()
    (root / "sub" / "kept.txt").write_text("x")
    yield root
    shutil.rmtree(root, ignore_errors=True)


MAKE = "import os; os.mkdir('made'); open('made/new.txt', 'w').write('y'); print('ok')\n"


def test_owners_come_back_after_a_run(ws: Path) -> None:
    mode = os.stat(ws).st_mode
    res = run_script(MAKE, ws)
    assert res.ok and res.stdout.strip() == "ok", res.stderr
    assert _owners(ws) == {os.geteuid()}
    assert os.stat(ws).st_mode == mode and (ws / "made" / "new.txt").read_text() == "y"


def test_owners_come_back_after_a_timeout(ws: Path) -> None:
    res = run_script(MAKE + "while True: pass\n", ws, Limits(timeout_s=1.0, cpu_s=5))
    assert res.timed_out
    assert _owners(ws) == {os.geteuid()}


def test_owners_come_back_when_the_cli_is_terminated(ws: Path, tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(MAKE + "import time\ntime.sleep(60)\n")
    proc = subprocess.Popen([*CLI, str(script), "--workspace", str(ws)], env=os.environ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 60
    while not (ws / "made" / "new.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (ws / "made" / "new.txt").exists(), "the run never started"
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    assert _owners(ws) == {os.geteuid()}


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--workspace", ""], "--workspace is empty"),
        (["--walls", ""], "names no wall"),
        (["--walls", " , "], "names no wall"),
    ],
)
def test_empty_workspace_and_walls_are_refused(tmp_path: Path, args, words) -> None:
    script = tmp_path / "s.py"
    script.write_text("open('x', 'w').write('x')\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    full = [*CLI, str(script), "--workspace", str(tmp_path), *args]
    proc = subprocess.run(full, capture_output=True, text=True, timeout=60, cwd=cwd, env=os.environ)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert not (cwd / "x").exists() and not (tmp_path / "x").exists()
    assert _owners(cwd) == {os.geteuid()}


def test_the_runner_refuses_no_walls(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no sandbox wall"):
        run_script("print(1)", tmp_path, walls=())
