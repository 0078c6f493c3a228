"""Remediation scripts that leave data made to stall or swell the grader (issue 23, point 2).

Each leaves the ledger unrepaired but hard to read: a VIRTUAL generated column computing 100 MB
per row, huge values, too many rows or tables, a file that is not SQLite, is enormous, or is
not a file (a FIFO cannot be made: the walls refuse mknod). Each must score 0 with its named
failure while grading stays inside bounds measured in CPU time (so they hold under load) and
peak memory: the trainer's process does next to nothing, and the sandboxed reader stays
under its own limits.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from er_helpers import open_episode, perfect_findings, submit_script

from datagauntlet.envs.event_recon.grading import remediation

CONNECT = "import sqlite3\ndb = sqlite3.connect('db.sqlite')\n"
VIRTUAL = (
    "ALTER TABLE ledger_entries ADD COLUMN g TEXT GENERATED ALWAYS AS "
    "(printf('%.*c', 100000000, 'x')) VIRTUAL"
)
ROWS = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n}) "


def _sql(*statements: str) -> str:
    return CONNECT + "".join(f"db.execute({s!r})\n" for s in statements) + "db.commit()\n"


OS = "import os\n"
SWAP = "os.rename('db.sqlite', 'real.sqlite')\nos.symlink('real.sqlite', 'db.sqlite')\n"
TABLES = "db.execute('BEGIN')\nfor i in range(300):\n    db.execute(f'CREATE TABLE t{i} (x)')\n"
FIRST_ROW = "rowid = (SELECT min(rowid) FROM ledger_entries)"
# case: (script, failure code, words the reason holds)
HOSTILE = {
    "virtual generated column": (_sql(VIRTUAL), "db_refused", "VIRTUAL generated column"),
    "stored generated column": (
        _sql("CREATE TABLE pad (x INTEGER, g INTEGER GENERATED ALWAYS AS (x * 2) STORED)",
             "INSERT INTO pad (x) VALUES (1)"),
        "db_refused", "STORED generated column",
    ),
    "huge blob": (
        _sql("CREATE TABLE pad (b)", "INSERT INTO pad VALUES (zeroblob(50000000))"),
        "db_refused", "over the bound",
    ),
    "rows over the byte bound": (
        _sql("CREATE TABLE pad (b)",
             ROWS.format(n=5) + "INSERT INTO pad SELECT zeroblob(900000) FROM n"),
        "db_refused", "is over 1,048,576 bytes",
    ),
    "huge text in the ledger": (
        _sql(f"UPDATE ledger_entries SET approved_by = printf('%.*c', 2e6, 'x') WHERE {FIRST_ROW}"),
        "db_refused", "over the bound",
    ),
    "many rows": (
        _sql("CREATE TABLE pad (x)", ROWS.format(n=1_100_000) + "INSERT INTO pad SELECT i FROM n"),
        "db_refused", "more than 1,000,000 rows",
    ),
    "many tables": (CONNECT + TABLES + "db.commit()\n", "db_refused", "over the bound of 200"),
    "virtual table": (
        _sql("CREATE VIRTUAL TABLE pad USING rtree(id, a, b)"), "db_refused", "virtual table"
    ),
    "not sqlite": (
        "open('db.sqlite', 'wb').write(b'not a database' * 1000)\n",
        "db_unreadable", "not a database",
    ),
    "enormous file": (
        OS + "os.truncate('db.sqlite', 300 * 2**20)\n", "db_refused", "over 268,435,456 bytes"
    ),
    "symlink": (OS + SWAP, "db_unreadable", "not a plain file"),
    "directory": (
        OS + "os.remove('db.sqlite')\nos.mkdir('db.sqlite')\n", "db_unreadable", "not a plain file"
    ),
}  # fmt: skip
# What grading may cost, whatever the script left (the reader's own limits are READ_LIMITS).
PARENT_CPU_S = 3.0
PARENT_GROWTH_MB = 64
READER_CPU_S = 20.0
READER_RSS_MB = 768


def _peak_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


@contextmanager
def _measured(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """CPU and peak-memory growth of this process, and the reader run's result."""
    runs: list[Any] = []
    real = remediation.run_script

    def watched(*args: Any, **kwargs: Any) -> Any:
        res = real(*args, **kwargs)
        runs.append((kwargs.get("filename"), res))
        return res

    monkeypatch.setattr(remediation, "run_script", watched)
    # an identical submission earlier in this process would be reused, never read again
    monkeypatch.setattr(remediation, "_OUTCOMES", OrderedDict())
    with open("/proc/self/clear_refs", "w") as fh:  # peak RSS from here on
        fh.write("5")
    base, cpu = _peak_kb(), time.process_time()
    out: dict[str, Any] = {}
    yield out
    out["cpu_s"] = time.process_time() - cpu
    out["peak_kb"] = _peak_kb()
    out["growth_mb"] = (out["peak_kb"] - base) / 1024
    out["reader"] = [r for name, r in runs if name == "<ledger_reader>"]


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_data_scores_zero_by_name_within_bounds(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, code, why = HOSTILE[case]
    with open_episode() as ep:
        submit_script(ep, script, perfect_findings(ep))
        with _measured(monkeypatch) as cost:
            s = ep.score()
        out = ep.outcome()
    assert out is not None and out.status == "ok", out  # the script itself ran cleanly
    assert (s.metrics["failure_code"], s.reward, s.metrics["validity"]) == (code, 0.0, 0)
    assert why in out.detail["unreadable"], out.detail
    assert cost["cpu_s"] < PARENT_CPU_S, cost
    assert cost["growth_mb"] < PARENT_GROWTH_MB, cost
    # Linux counts the spawning process's address space (before exec) in a child's peak RSS,
    # so a reader spawned by a process larger than its bound reports that process's peak; its
    # own memory is held by its rlimit (the next test ties that to READER_RSS_MB).
    rss_bound_kb = max(READER_RSS_MB * 1024, cost["peak_kb"] + 1)
    for run in cost["reader"]:  # none when the file was refused before any read
        assert run.cpu_s < READER_CPU_S and run.max_rss_kb < rss_bound_kb, (run, cost)


def test_the_readers_limits_are_the_bounds_the_tests_assert() -> None:
    lim = remediation.READ_LIMITS
    assert lim.cpu_s <= READER_CPU_S and lim.memory_mb <= READER_RSS_MB
    assert lim.timeout_s <= 60.0


def test_views_and_triggers_are_never_evaluated() -> None:
    # an expensive view and trigger beside a real (if wrong) change: read as tables only
    script = _sql(
        "CREATE VIEW v AS SELECT printf('%.*c', 100000000, 'x') AS g FROM ledger_entries",
        "CREATE TRIGGER t AFTER INSERT ON payouts BEGIN SELECT printf('%.*c', 1e8, 'x'); END",
        "CREATE TABLE note (x)",
        "INSERT INTO note VALUES (1)",
    )
    with open_episode() as ep:
        submit_script(ep, script, perfect_findings(ep))
        cpu = time.process_time()
        s = ep.score()
        assert time.process_time() - cpu < PARENT_CPU_S
    assert s.metrics["failure_code"] == "ledger_incomplete" and ep.outcome().refusal is None


def test_a_reader_killed_at_its_memory_bound_is_a_read_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the reader's own process limit, not a check in it, stops this one: 400,000 rows are
    # under every row bound, but their digests do not fit in 40 MB
    monkeypatch.setattr(remediation, "READ_LIMITS", remediation.READ_LIMITS.with_(memory_mb=40))
    rows = _sql("CREATE TABLE pad (x)", ROWS.format(n=400_000) + "INSERT INTO pad SELECT i FROM n")
    with open_episode() as ep:
        submit_script(ep, rows, perfect_findings(ep))
        s = ep.score()
        why = ep.outcome().detail["unreadable"]
    assert s.metrics["failure_code"] == "db_read_limit" and s.reward == 0.0
    assert "rlimits: memory" in why, why


def test_the_oracle_still_scores_one_and_its_reading_is_cheap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from test_er_graded_run import _oracle_script

    with open_episode() as ep:
        submit_script(ep, _oracle_script(ep), perfect_findings(ep))
        with _measured(monkeypatch) as cost:
            s = ep.score()
    assert s.reward == 1.0 and s.metrics["failure_code"] == "solved"
    [reader] = cost["reader"]
    assert reader.cpu_s < 2.0 and cost["cpu_s"] < PARENT_CPU_S, (reader, cost)


def test_a_database_left_in_wal_mode_is_read_with_its_wal() -> None:
    # committed but never checkpointed (the process ends without closing): the -wal holds it
    script = (
        CONNECT + "db.execute('PRAGMA journal_mode = WAL')\n"
        "db.execute('CREATE TABLE note (x)')\ndb.execute('INSERT INTO note VALUES (1)')\n"
        "db.commit()\nimport os\nos._exit(0)\n"
    )
    with open_episode() as ep:
        submit_script(ep, script, perfect_findings(ep))
        out = ep.outcome()
    assert out is not None and out.refusal is None and out.db_changed, out


def test_the_docs_list_the_readers_bounds_and_the_failure_codes_as_the_code_has_them() -> None:
    from pathlib import Path

    from datagauntlet.envs.event_recon.grading import ledger_reader
    from datagauntlet.envs.event_recon.grading.grader import FAILURE_CODES, INVALID_CODES

    doc = (Path(__file__).parents[2] / "docs" / "envs" / "event-recon.md").read_text()
    block = doc.split("<!-- reader bounds -->")[1].split("<!-- end reader bounds -->")[0]
    values = [line.split("|")[2].strip() for line in block.strip().splitlines()[2:]]
    b, lim = ledger_reader.BOUNDS, remediation.READ_LIMITS
    assert values == [
        f"{remediation.MAX_DB_BYTES:,} bytes",
        f"{b['max_row_bytes']:,} bytes",
        f"{b['max_rows']:,}",
        f"{b['max_bytes']:,}",
        f"{b['max_tables']:,}",
        f"{b['max_groups']:,}",
        f"{remediation.SUMMARY_BYTES:,} bytes",
        f"{lim.cpu_s:g} s",
        f"{lim.memory_mb} MB",
        f"{lim.timeout_s:g} s",
    ]
    table = doc.split("### Failure codes")[1].split("## Policies")[0]
    listed = [line.split("`")[1] for line in table.splitlines() if line.startswith("| `")]
    assert listed == list(FAILURE_CODES)
    words = {6: "six", 9: "nine"}
    assert f"The first {words[len(INVALID_CODES)]} are the validity gate" in table
    assert list(FAILURE_CODES[: len(INVALID_CODES)]) == sorted(
        INVALID_CODES, key=FAILURE_CODES.index
    )
