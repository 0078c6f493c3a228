"""The docs page of bad-batch-gate, and its fixture tables pinned to the code's output."""

from __future__ import annotations

from bbg_helpers import REPO, fixture_env

from datagauntlet.envs.bad_batch_gate import tables

PAGE = REPO / "docs" / "envs" / "bad-batch-gate.md"


def test_page_fixture_tables_are_this_codes_output() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for name, table in tables.fixture_tables(fixture_env()).items():
        assert table in page, f"docs table {name} is stale; regenerate it"


def test_docs_page_names_every_tool() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for tool in (
        "read_contract",
        "list_batches",
        "profile_batch",
        "run_sql",
        "load_batch",
        "quarantine_batch",
        "submit_report",
    ):
        assert tool in page
