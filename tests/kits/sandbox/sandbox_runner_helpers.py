"""What the sandbox-runner tests share: the mark for tests that need root (they drop
privileges), limits roomy enough for any legitimate script, and a small ledger database."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from datagauntlet.kits.sandbox import Limits

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="drops privileges: runs as root")
QUICK = Limits(timeout_s=10.0, cpu_s=5, memory_mb=512)


def ledger(path: Path) -> None:
    """A new SQLite database at `path`: table ledger, three partners' amounts."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE ledger (partner TEXT, amount INTEGER)")
    db.executemany("INSERT INTO ledger VALUES (?, ?)", [("p1", 10), ("p2", 20), ("p3", 30)])
    db.commit()
    db.close()
