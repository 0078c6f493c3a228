"""The action log's hash chain, its listing and its bound on arguments (rules that survived
planted bugs and mutants, docs/mutation/)."""

from __future__ import annotations

import dataclasses
import json

from datagauntlet.core.action_log import GENESIS, ActionLog, _digest, canonical_json


def _log_of(n: int) -> ActionLog:
    log = ActionLog()
    for i in range(n):
        entry = log.open_entry("tool", {"i": i})
        log.close_entry(entry, True, f"ok {i}")
    return log


def test_renumbered_entries_with_a_rehashed_chain_are_not_intact() -> None:
    """Every hash recomputed after renumbering is still a forgery: seq must equal position."""
    log = _log_of(3)
    assert log.chain_intact()
    prev = GENESIS
    for i, entry in enumerate(log.entries):
        entry.seq = i + 1
        entry.prev_hash = prev
        # a closed entry no longer keeps its arguments' text: hash what chain_intact re-derives
        entry.hash = _digest(entry, canonical_json(entry.args))
        prev = entry.hash
    assert not log.chain_intact()
    for i, entry in enumerate(log.entries):  # the same forgery with the true numbers passes
        entry.seq = i
    prev = GENESIS
    for entry in log.entries:
        entry.prev_hash = prev
        entry.hash = _digest(entry, canonical_json(entry.args))
        prev = entry.hash
    assert log.chain_intact()


def test_entry_seq_is_its_position() -> None:
    log = _log_of(4)
    assert [e.seq for e in log.entries] == [0, 1, 2, 3]
    swapped = _log_of(2)
    a, b = swapped.entries
    swapped.entries = [dataclasses.replace(b), dataclasses.replace(a)]
    assert not swapped.chain_intact()


def test_a_listed_entry_carries_every_field_and_its_hash() -> None:
    log = ActionLog()
    e = log.open_entry("peek", {"n": 1})
    log.close_entry(e, True, "seen", {"tables": ["t"]})
    f = log.open_entry("answer", {"n": 2})
    log.close_entry(f, False, "refused")
    listed = log.as_list()
    assert listed[0] == {
        "seq": 0,
        "tool": "peek",
        "args": {"n": 1},
        "executed": True,
        "summary": "seen",
        "detail": {"tables": ["t"]},
        "prev_hash": "genesis",
        "hash": e.hash,
    }
    assert listed[1]["prev_hash"] == e.hash and listed[1]["hash"] == f.hash
    assert json.loads(json.dumps(listed)) == listed


def test_executed_filters_by_tool_and_by_outcome() -> None:
    log = ActionLog()
    for tool_name, ran in [("a", True), ("b", True), ("a", False), ("a", True)]:
        log.close_entry(log.open_entry(tool_name, {}), ran, "")
    assert [e.seq for e in log.executed()] == [0, 1, 3]
    assert [e.seq for e in log.executed("a")] == [0, 3]
    assert [e.seq for e in log.executed("b")] == [1]
    assert log.executed("c") == []


def test_text_sha256_is_the_sha256_of_the_utf8_text_whatever_the_slice_size() -> None:
    import hashlib

    from datagauntlet.core.action_log import text_sha256

    text = "ab\u00e9\ud800cd" * 5  # a lone surrogate, which an agent may send
    want = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    for chunk in (1, 2, 3, 7, 1 << 20):
        assert text_sha256(text, chunk) == want
    assert text_sha256("") == hashlib.sha256(b"").hexdigest()


def test_bound_newest_replaces_only_the_newest_entrys_oversized_arguments() -> None:
    from datagauntlet.core.action_log import text_sha256

    log = ActionLog()
    for _ in range(2):
        log.close_entry(log.open_entry("t", {"n": "y" * 300}), True, "ok")
    big = {"x": "a" * 500}
    entry = log.open_entry("t", big)
    log.bound_newest(100)
    text = json.dumps(big, sort_keys=True, separators=(",", ":"))
    assert entry.args == {
        "_preview": text[:50],
        "_characters": len(text),
        "_sha256": text_sha256(text),
    }
    log.close_entry(entry, False, "refused")
    assert [e.args for e in log.entries[:2]] == [{"n": "y" * 300}] * 2  # the older ones kept
    assert log.chain_intact()
    small = log.open_entry("t", {"x": 1})
    log.bound_newest(100)
    assert small.args == {"x": 1}
    log.close_entry(small, False, "refused")
    assert log.chain_intact()
