"""The five tools on a real world: exactly these names, their bounds, and hostile input."""

from __future__ import annotations

import json
import sqlite3

import pytest
from er_helpers import open_episode

from datagauntlet.envs.event_recon.world.records import FILES as INPUT_FILES

TOOLS = ["sql_query", "read_file", "write_file", "run_python", "submit_report"]


def test_exactly_the_five_tools_and_no_shell() -> None:
    with open_episode() as ep:
        assert ep.tool_names == TOOLS
        text = json.dumps(ep.tool_specs)
        for shell in ("bash", "shell", "exec_command", "list_files"):
            assert f'"name": "{shell}"' not in text


def test_workspace_holds_exactly_the_four_inputs_and_close_removes_it() -> None:
    with open_episode() as ep:
        root = ep.root
        assert sorted(p.name for p in root.iterdir()) == sorted(INPUT_FILES)
    assert not root.exists()
    ep.close()  # safe twice


# --- sql_query -------------------------------------------------------------------------------
def test_sql_reads_the_ledger() -> None:
    with open_episode() as ep:
        out = ep.call("sql_query", {"query": "SELECT COUNT(*) FROM ledger_entries"})
        assert out["rows"][0][0] > 0 and out["truncated"] is False and out["truncated_by"] is None


def test_sql_row_bound_says_so() -> None:
    with open_episode(sql_row_limit=5) as ep:
        out = ep.call("sql_query", {"query": "SELECT * FROM ledger_entries"})
        assert out["row_count"] == 5 and out["truncated"] and out["truncated_by"] == "rows"


def test_sql_byte_bound_stops_wide_cells_inside_the_row_bound() -> None:
    # 200 rows of ~100 kB each are inside the row bound and would be ~20 MB of answer
    query = "SELECT printf('%.*c', 100000, 'x') FROM ledger_entries LIMIT 200"
    with open_episode() as ep:
        out = ep.call("sql_query", {"query": query})
        assert out["truncated"] and out["truncated_by"] == "bytes"
        assert len(json.dumps(out["rows"])) <= 1_000_000
        assert out["row_count"] < 200


@pytest.mark.parametrize(
    "query",
    [
        "DELETE FROM ledger_entries",
        "UPDATE payouts SET amount_minor = 0",
        "DROP TABLE partners",
        "SELECT 1; DELETE FROM ledger_entries",
        "ATTACH DATABASE ':memory:' AS x",
        "PRAGMA writable_schema = 1",
        "SELECT zeroblob(1000000000)",
    ],
)
def test_sql_is_read_only_and_changes_nothing(query: str) -> None:
    with open_episode() as ep:
        db = ep.root / "db.sqlite"
        before = db.read_bytes()
        out = ep.call("sql_query", {"query": query})
        assert "error" in out
        assert db.read_bytes() == before


def test_sql_timeout_is_configurable() -> None:
    spin = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT MAX(x) FROM c"
    with open_episode(sql_timeout_seconds=0.2) as ep:
        out = ep.call("sql_query", {"query": spin})
        assert "error" in out and "budget" in out["error"]


# --- read_file / write_file ------------------------------------------------------------------
def test_read_file_pages_within_the_byte_limit() -> None:
    with open_episode(read_bytes_limit=1_000) as ep:
        total = (ep.root / "webhooks.jsonl").stat().st_size
        text, offset, calls = "", 0, 0
        while offset is not None and calls < 10_000:
            out = ep.call("read_file", {"path": "webhooks.jsonl", "offset": offset})
            assert out["bytes"] <= 1_000
            text += out["content"]
            offset = out["next_offset"]
            calls += 1
        assert text.encode() == (ep.root / "webhooks.jsonl").read_bytes()
        assert calls == -(-total // 1_000) or calls >= total // 1_000


def test_default_read_limit_is_120000_bytes() -> None:
    with open_episode() as ep:
        out = ep.call("read_file", {"path": "webhooks.jsonl"})
        assert out["bytes"] <= 120_000
        assert out["size"] == (ep.root / "webhooks.jsonl").stat().st_size


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "../../etc/passwd", "sub/../../x", "~/x", "", "a\x00b", "x" * 300],
)
def test_paths_outside_the_workspace_are_refused(path: str) -> None:
    with open_episode() as ep:
        assert "error" in ep.call("read_file", {"path": path})
        assert "error" in ep.call("write_file", {"path": path, "content": "x"})


def test_a_symlink_out_of_the_workspace_is_not_followed() -> None:
    with open_episode() as ep:
        (ep.root / "link").symlink_to("/etc")
        assert "error" in ep.call("read_file", {"path": "link/passwd"})
        assert "error" in ep.call("write_file", {"path": "link/evil", "content": "x"})


@pytest.mark.parametrize("name", INPUT_FILES)
def test_the_four_inputs_cannot_be_overwritten(name: str) -> None:
    with open_episode() as ep:
        before = (ep.root / name).read_bytes()
        out = ep.call("write_file", {"path": name, "content": "gone"})
        assert "error" in out
        assert (ep.root / name).read_bytes() == before


def test_written_files_are_read_back() -> None:
    with open_episode() as ep:
        out = ep.call("write_file", {"path": "notes/a.txt", "content": "héllo"})
        assert out["bytes"] == 6
        assert ep.call("read_file", {"path": "notes/a.txt"})["content"] == "héllo"


# --- run_python --------------------------------------------------------------------------------
def test_run_python_sees_a_copy_and_cannot_damage_the_workspace() -> None:
    code = (
        "import os, sqlite3\n"
        "db = sqlite3.connect('db.sqlite'); db.execute('DELETE FROM ledger_entries'); db.commit()\n"
        "open('INTEGRATION.md', 'w').write('gone'); open('new.txt', 'w').write('x')\n"
        "print(os.getcwd())\n"
    )
    with open_episode() as ep:
        root = ep.root
        before = {n: (root / n).read_bytes() for n in INPUT_FILES}
        out = ep.call("run_python", {"code": code})
        assert out["exit_code"] == 0 and out["stdout"].strip() == "/workspace"
        assert {n: (root / n).read_bytes() for n in INPUT_FILES} == before
        assert not (root / "new.txt").exists()
        conn = sqlite3.connect(root / "db.sqlite")
        assert conn.execute("SELECT COUNT(*) FROM ledger_entries").fetchone()[0] > 0
        conn.close()


def test_run_python_sees_the_agents_own_files() -> None:
    with open_episode() as ep:
        ep.call("write_file", {"path": "helper.py", "content": "X = 41\n"})
        out = ep.call("run_python", {"code": "import sys; sys.path.insert(0, '.')\n"
                                              "import helper; print(helper.X + 1)"})  # fmt: skip
        assert out["stdout"].strip() == "42"


def test_run_python_timeout_is_configurable() -> None:
    with open_episode(python_timeout_seconds=1.0) as ep:
        out = ep.call("run_python", {"code": "import time\ntime.sleep(30)"})
        assert out["timed_out"] is True and out["exit_code"] != 0


def test_run_python_answers_identically_twice() -> None:
    code = "import os; print(os.getcwd()); raise ValueError(os.listdir('.'))"
    with open_episode() as a, open_episode() as b:
        assert a.call("run_python", {"code": code}) == b.call("run_python", {"code": code})


# --- submit_report -------------------------------------------------------------------------------
def _finding() -> dict[str, str]:
    return {"family": "duplicate_delivery", "partner_id": "p", "event_id": "e"}


def test_submit_refuses_a_missing_script_and_can_be_retried() -> None:
    with open_episode() as ep:
        out = ep.call("submit_report", {"findings": [_finding()], "script_path": "fix.py"})
        assert "error" in out and not ep.done
        ep.call("write_file", {"path": "fix.py", "content": "pass\n"})
        ok = ep.call("submit_report", {"findings": [_finding()], "script_path": "fix.py"})
        assert ok == {"status": "accepted", "findings": 1, "script_path": "fix.py"}
        assert ep.done


def test_submit_refuses_an_input_as_script() -> None:
    with open_episode() as ep:
        out = ep.call("submit_report", {"findings": [], "script_path": "INTEGRATION.md"})
        assert "error" in out and not ep.done


def test_submit_refuses_an_unknown_family() -> None:
    with open_episode() as ep:
        ep.call("write_file", {"path": "fix.py", "content": "pass\n"})
        bad = dict(_finding(), family="made_up_family")
        out = ep.call("submit_report", {"findings": [bad], "script_path": "fix.py"})
        assert "error" in out and not ep.done


def test_submit_is_accepted_once_and_reveals_no_score() -> None:
    with open_episode() as ep:
        ep.call("write_file", {"path": "fix.py", "content": "pass\n"})
        out = ep.call("submit_report", {"findings": [_finding()], "script_path": "fix.py"})
        assert set(out) == {"status", "findings", "script_path"}
        again = ep.call("submit_report", {"findings": [_finding()], "script_path": "fix.py"})
        assert "error" in again


def test_script_is_snapshotted_at_submission() -> None:
    with open_episode() as ep:
        ep.call("write_file", {"path": "fix.py", "content": "pass\n"})
        ep.call("submit_report", {"findings": [_finding()], "script_path": "fix.py"})
        (ep.root / "fix.py").write_text("raise SystemExit(1)\n")
        assert ep.score().metrics["script_bytes"] == 5
