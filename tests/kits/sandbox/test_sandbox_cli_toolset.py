"""`datagauntlet sandbox check|run` and the `run_python` toolset."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from datagauntlet.cli.main import main
from datagauntlet.core.toolset import ToolError
from datagauntlet.kits.sandbox import WALLS, Limits, PythonToolset
from datagauntlet.kits.sandbox.runtime import runtime

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="drops privileges: runs as root")
JSON_KEYS = {"ok", "exit_code", "stdout", "stderr", "violations", "walls", "wall_s", "cpu_s"}


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A directory the run user can reach (pytest's tmp_path sits under a 0700 directory)."""
    path = Path(tempfile.mkdtemp(prefix="cli-", dir=runtime().scratch))
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@root_only
def test_check_reports_all_six_walls_up_here(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "check", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [w["wall"] for w in report["walls"]] == list(WALLS)
    assert all(w["up"] and w["held"] for w in report["walls"]), report
    assert report["all_up"]
    assert main(["sandbox", "check"]) == 0
    text = capsys.readouterr().out
    for wall in WALLS:
        assert f"{wall} " in text and "DOWN" not in text


@root_only
def test_run_json_on_an_escape(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = workspace / "try.py"
    script.write_text("print('start')\nprint(open('/etc/passwd').read())\n")
    assert main(["sandbox", "run", str(script), "--workspace", str(workspace), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert JSON_KEYS | {"truncated"} <= set(doc)
    assert doc["ok"] is False and doc["exit_code"] == 1
    assert doc["stdout"] == "start\n" and "root:" not in doc["stdout"] + doc["stderr"]
    assert doc["walls"] == list(WALLS)
    assert [(v["wall"], v["event"]) for v in doc["violations"]] == [("audit", "open")]


@root_only
def test_run_plain_passes_output_and_exit(
    workspace: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    script = workspace / "ok.py"
    script.write_text(
        "import sqlite3\ndb = sqlite3.connect('x.db')\n"
        "db.execute('create table if not exists t(a)')\nprint('done')\n"
    )
    assert main(["sandbox", "run", str(script), "--workspace", str(workspace)]) == 0
    out, err = capfd.readouterr()
    assert out == "done\n"
    assert "walls up: process, rlimits, audit, seccomp, landlock, netns" in err
    assert (workspace / "x.db").exists()  # in place: the workspace keeps what the script wrote
    flags = ["--copy", "--timeout", "5", "--memory", "256", "--walls", "process,rlimits"]
    assert main(["sandbox", "run", str(script), "--workspace", str(workspace), *flags]) == 0
    assert "walls up: process, rlimits\n" in capfd.readouterr().err


@root_only
def test_run_timeout_flag(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = workspace / "sleep.py"
    script.write_text("import time; time.sleep(60)")
    argv = ["sandbox", "run", str(script), "--workspace", str(workspace), "--json"]
    assert main([*argv, "--timeout", "0.5"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["timed_out"] and doc["wall_s"] < 5


def test_cli_mistakes_exit_2_with_one_line(tmp_path: Path) -> None:
    cases = [
        ["sandbox", "run", str(tmp_path / "missing.py"), "--workspace", str(tmp_path)],
        ["sandbox", "run", __file__, "--workspace", str(tmp_path / "nope")],
        ["sandbox", "run", __file__, "--workspace", str(tmp_path), "--walls", "moat"],
        ["sandbox", "run", __file__, "--workspace", str(tmp_path), "--timeout", "-1"],
        ["sandbox"],
    ]
    for argv in cases:
        out = subprocess.run(
            [sys.executable, "-m", "datagauntlet.cli.main", *argv],
            capture_output=True,
            text=True,
            env=os.environ,
            check=False,
        )
        assert out.returncode == 2, (argv, out.stderr)
        assert "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr


@root_only
def test_run_python_tool_runs_on_a_copy(workspace: Path) -> None:
    db = sqlite3.connect(workspace / "db.sqlite")
    db.execute("create table t(x)")
    db.commit()
    db.close()
    ts = PythonToolset(workspace, Limits(timeout_s=10, cpu_s=5))
    ts.open()
    [bound] = ts.tools()
    assert bound.tool.name == "run_python" and bound.tool.mutates is False
    assert bound.tool.spec()["function"]["parameters"]["required"] == ["code"]
    code = (
        "import os, sqlite3\nprint(os.getcwd())\n"
        "c = sqlite3.connect('db.sqlite'); c.execute('insert into t values (1)'); c.commit()\n"
        "open('../escape.txt', 'w')\n"
    )
    first = bound.handler(code=code)
    again = bound.handler(code=code)
    assert first == again  # no timings, no per-run paths: a replay sees the same answer
    assert set(first) == {"exit_code", "stdout", "stderr", "timed_out", "truncated", "violations"}
    assert first["stdout"] == "/workspace\n"
    assert first["exit_code"] == 1 and first["violations"] == ["audit: open /escape.txt"]
    assert str(runtime().scratch) not in json.dumps(first)
    # the agent's workspace is unchanged: each call had its own copy
    count = sqlite3.connect(workspace / "db.sqlite").execute("select count(*) from t").fetchone()
    assert count == (0,)
    assert ts.runs == 2 and ts.violations == 2
    ts.close()
    ts.close()


def test_run_python_refuses_when_required_walls_cannot_rise(workspace: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("as root every wall rises; the refusal is tested on the result parser")
    ts = PythonToolset(workspace, require=WALLS)
    with pytest.raises(ToolError):
        ts.run_python("pass")


def test_run_python_is_described_with_its_limits_and_bounds_its_code() -> None:
    from datagauntlet.kits.sandbox.toolset import MAX_CODE_CHARS

    ts = PythonToolset("/nonexistent", Limits(timeout_s=7.5, memory_mb=300))
    (bound,) = [b for b in ts.tools() if b.tool.name == "run_python"]
    assert bound.tool.description == (
        "Run Python 3.11 code (standard library only, no network, no subprocesses) in a fresh "
        "copy of the workspace: it can read the workspace files and write scratch files, but "
        "writes are discarded after the call. Limits: 7.5 s, 300 MB. "
        "Returns exit_code, stdout, stderr, timed_out, truncated and violations."
    )
    code = bound.tool.parameters["properties"]["code"]
    assert code == {
        "type": "string",
        "maxLength": MAX_CODE_CHARS,
        "description": "the Python source to run, as a script",
    }
    accepts = bound.tool.accepts
    assert accepts({"code": "x" * MAX_CODE_CHARS})  # True: the arguments are acceptable
    assert not accepts({"code": "x" * (MAX_CODE_CHARS + 1)})
    assert not accepts({"code": 5})


def test_a_fresh_workspace_copies_folders_files_and_links_as_links(tmp_path: Path) -> None:
    from datagauntlet.kits.sandbox import fresh_workspace

    src = tmp_path / "src"
    (src / "a" / "b").mkdir(parents=True)
    (src / "a" / "b" / "deep.txt").write_text("deep")
    (src / "top.txt").write_text("top")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("outside")
    os.link(elsewhere, src / "hard.txt")  # a hard link becomes a file of its own
    (src / "in.lnk").symlink_to("a/b/deep.txt")
    (src / "out.lnk").symlink_to(elsewhere)
    (src / "dir.lnk").symlink_to("a")
    os.mkfifo(src / "pipe")
    with fresh_workspace(src) as ws:
        assert (ws / "a" / "b" / "deep.txt").read_text() == "deep"
        assert (ws / "top.txt").read_text() == "top"
        assert not (ws / "hard.txt").is_symlink() and (ws / "hard.txt").read_text() == "outside"
        assert os.stat(ws / "hard.txt").st_ino != os.stat(elsewhere).st_ino
        for name, target in (("in.lnk", "a/b/deep.txt"), ("out.lnk", str(elsewhere)),
                             ("dir.lnk", "a")):  # fmt: skip
            assert (ws / name).is_symlink() and os.readlink(ws / name) == target
        assert not (ws / "pipe").exists()
        assert sorted(p.name for p in ws.iterdir()) == [
            "a", "dir.lnk", "hard.txt", "in.lnk", "out.lnk", "top.txt"
        ]  # fmt: skip
