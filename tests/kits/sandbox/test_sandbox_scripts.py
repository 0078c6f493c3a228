"""What a legitimate script can do in the sandbox (SQLite with every wall up, the standard
library, its own fresh copy of the workspace) and what it runs in (UTF-8 mode, the workspace as
home, no site, a uid of its own), and the CPU and memory a run reports."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from sandbox_runner_helpers import QUICK, ledger, root_only

from datagauntlet.kits.sandbox import GRADED, WALLS, fresh_workspace, run_script

REMEDIATION = """
import sqlite3
db = sqlite3.connect("db.sqlite")
with db:
    db.execute("UPDATE ledger SET amount = amount * 2 WHERE partner = 'p1'")
    db.execute("DELETE FROM ledger WHERE partner = 'p3'")
    db.execute("INSERT INTO ledger VALUES ('p4', 7)")
print(db.execute("SELECT count(*) FROM ledger").fetchone()[0])
"""


@root_only
def test_sqlite_remediation_runs_with_every_wall(tmp_path: Path) -> None:
    src = tmp_path / "ws"
    src.mkdir()
    ledger(src / "db.sqlite")
    with fresh_workspace(src) as ws:
        res = run_script(REMEDIATION, ws, GRADED, require=WALLS)
        rows = (
            sqlite3.connect(ws / "db.sqlite").execute("SELECT * FROM ledger ORDER BY 1").fetchall()
        )
    assert res.ok, (res.stderr, res.violations)
    assert res.walls == WALLS
    assert res.stdout.strip() == "3"
    assert rows == [("p1", 20), ("p2", 20), ("p4", 7)]
    # the source workspace is untouched: the run had a copy
    orig = sqlite3.connect(src / "db.sqlite").execute("SELECT * FROM ledger ORDER BY 1").fetchall()
    assert orig == [("p1", 10), ("p2", 20), ("p3", 30)]


@root_only
def test_script_by_path_and_stdlib_breadth() -> None:
    code = (
        "import csv, json, decimal, datetime, zoneinfo, hashlib, re, threading, tempfile\n"
        "import collections, dataclasses, statistics, pathlib, sqlite3\n"
        "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
        "db = sqlite3.connect(pathlib.Path('w.db')); db.execute('pragma journal_mode=wal')\n"
        "db.execute('create table t(x)'); db.execute('insert into t values (1)'); db.commit()\n"
        "print(datetime.datetime(2024, 3, 31, 2, tzinfo=zoneinfo.ZoneInfo('Europe/Paris')))\n"
        "print(tempfile.mkdtemp().startswith(pathlib.Path.cwd().as_posix()))\n"
    )
    with fresh_workspace() as ws:
        (ws / "fix.py").write_text(code)
        res = run_script(ws / "fix.py", ws, QUICK)
    assert res.ok, (res.stderr, res.violations)
    assert res.stdout.split() == ["2024-03-31", "02:00:00+01:00", "True"]


@root_only
def test_a_graded_copy_sees_nothing_an_earlier_run_wrote(tmp_path: Path) -> None:
    src = tmp_path / "ws"
    src.mkdir()
    (src / "input.txt").write_text("original")
    with fresh_workspace(src) as ws:
        res = run_script("open('input.txt', 'w').write('tampered'); open('x', 'w')", ws, QUICK)
        assert res.ok
    with fresh_workspace(src) as ws:
        assert (ws / "input.txt").read_text() == "original"
        assert not (ws / "x").exists()
    assert (src / "input.txt").read_text() == "original"


@root_only
def test_the_script_runs_in_utf8_mode_with_the_workspace_as_home_and_no_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    import datagauntlet

    code = (
        "import os, sys, json\n"
        "keys = ('HOME', 'TMPDIR', 'SQLITE_TMPDIR', 'TZ', 'LANG', 'PATH', 'PYTHONPATH')\n"
        "open('sub/made.txt', 'w').write('x')  # a folder of the workspace is the run's\n"
        "sys.stdout.write(json.dumps({'env': {k: os.environ.get(k) for k in keys},\n"
        "    'utf8': sys.flags.utf8_mode, 'no_site': sys.flags.no_site,\n"
        "    'no_bytecode': sys.dont_write_bytecode, 'cwd': os.getcwd(), 'file': __file__,\n"
        "    'uid': os.getuid()}))\n"
        "sys.stdout.flush(); sys.stdout.buffer.write(b'\\xff')\n"
    )
    root = str(Path(datagauntlet.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", f"/tmp/a{os.pathsep}{root}{os.pathsep}")
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # -B alone must keep it off
    runs = {}
    with fresh_workspace() as ws:
        (ws / "sub").mkdir()
        (ws / "inside.py").write_text(code)
        outside = tmp_path / "outside.py"
        outside.write_text(code)
        runs["text"] = run_script(code, ws, QUICK)
        runs["named"] = run_script(code, ws, QUICK, filename="given.py")
        runs["bytes"] = run_script(code.encode(), ws, QUICK)
        runs["bytes, named"] = run_script(code.encode(), ws, QUICK, filename="b.py")
        runs["inside"] = run_script(ws / "inside.py", ws, QUICK)
        runs["outside"] = run_script(outside, ws, QUICK)
        runs["no-process-wall"] = run_script(code, ws, QUICK, walls=("rlimits",))
        monkeypatch.delenv("PYTHONPATH")
        runs["no-process-wall, no path"] = run_script(code, ws, QUICK, walls=("rlimits",))
        real = os.path.realpath(ws)
    for run in runs.values():
        assert run.exit_code == 0 and run.stdout.endswith("\ufffd"), run
    seen = {k: json.loads(r.stdout[:-1]) for k, r in runs.items()}
    given = ("text", "named", "bytes", "bytes, named", "inside", "outside")
    for name in given:
        what = seen[name]
        assert what["env"] == {
            "HOME": real,
            "TMPDIR": real,
            "SQLITE_TMPDIR": real,
            "TZ": "UTC",
            "LANG": "C.UTF-8",
            "PATH": "/nonexistent",
            "PYTHONPATH": None,
        }
        assert (what["utf8"], what["no_site"], what["no_bytecode"]) == (1, 1, True)
        assert what["cwd"] == real and what["uid"] >= 0x10000  # a uid of its own
    bare = seen["no-process-wall"]  # this process's environment, the package first on the path
    assert bare["env"]["PYTHONPATH"] == os.pathsep.join([root, "/tmp/a"])
    assert (bare["utf8"], bare["no_site"], bare["no_bytecode"]) == (1, 0, True)
    assert bare["uid"] == os.getuid()  # no process wall: no uid of its own
    assert seen["no-process-wall, no path"]["env"]["PYTHONPATH"] == root
    assert {k: seen[k]["file"] for k in given} == {
        "text": "<script>", "named": "given.py", "bytes": "<script>", "bytes, named": "b.py",
        "inside": "inside.py", "outside": "<outside.py>",
    }  # fmt: skip


@root_only
def test_code_text_with_a_lone_surrogate_is_passed_on_not_refused() -> None:
    with fresh_workspace() as ws:
        res = run_script("print('ok')  # \udcff\n", ws, QUICK)  # a lone surrogate
    assert res.exit_code == 0 and res.stdout == "ok\n"


@root_only
def test_a_run_reports_the_cpu_and_memory_its_process_used() -> None:
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    with fresh_workspace() as ws:
        res = run_script(burn, ws, QUICK)
    assert res.exit_code == 0
    assert 0.25 <= res.cpu_s <= res.wall_s + 0.05  # user + system time of the child
    assert res.max_rss_kb > 1000  # a Python interpreter's resident set, in KiB
