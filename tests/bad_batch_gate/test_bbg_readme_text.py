"""The README section of bad-batch-gate, and its fixture tables pinned to the code's output."""

from __future__ import annotations

from bbg_helpers import REPO, fixture_env

from datagauntlet.envs.bad_batch_gate import tables

START, END = "<!-- bad-batch-gate:start -->", "<!-- bad-batch-gate:end -->"


def readme_section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert START in text and END in text
    return text[text.index(START) : text.index(END)]


def test_readme_fixture_tables_are_this_codes_output() -> None:
    section = readme_section()
    for name, table in tables.fixture_tables(fixture_env()).items():
        assert table in section, f"README table {name} is stale; regenerate it"


def test_docs_page_exists() -> None:
    page = (REPO / "docs" / "envs" / "bad-batch-gate.md").read_text(encoding="utf-8")
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
