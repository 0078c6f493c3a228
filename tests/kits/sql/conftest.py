"""The SQL kit's tests share one connection: a table `t` with one committed row."""

from __future__ import annotations

import sqlite3

import pytest


@pytest.fixture
def conn() -> sqlite3.Connection:
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE t (v TEXT)")
    c.execute("INSERT INTO t VALUES ('x')")
    c.commit()
    return c
