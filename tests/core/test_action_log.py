"""The action log is hash-chained: edits, drops and reorders are detected."""

from collections import OrderedDict

import pytest

from datagauntlet.core.action_log import ActionLog


def _log() -> ActionLog:
    log = ActionLog()
    for i in range(4):
        e = log.open_entry("tool", {"i": i})
        log.close_entry(e, i % 2 == 0, f"result {i}", {"tables": ["t"]} if i == 2 else None)
    return log


def test_intact_chain() -> None:
    log = _log()
    assert log.chain_intact()
    assert [e.seq for e in log.executed()] == [0, 2]
    assert log.entries[0].prev_hash == "genesis"
    assert log.entries[1].prev_hash == log.entries[0].hash


def test_editing_an_entry_breaks_the_chain() -> None:
    log = _log()
    log.entries[1].executed = True
    assert not log.chain_intact()


def test_editing_detail_breaks_the_chain() -> None:
    log = _log()
    log.entries[2].detail["tables"] = ["other"]
    assert not log.chain_intact()


def test_dropping_or_reordering_breaks_the_chain() -> None:
    log = _log()
    del log.entries[1]
    assert not log.chain_intact()
    log = _log()
    log.entries[1], log.entries[2] = log.entries[2], log.entries[1]
    assert not log.chain_intact()


def test_editing_arguments_breaks_the_chain() -> None:
    log = _log()
    log.entries[3].args = {"i": 99}  # what the agent sent is rewritten after the fact
    assert not log.chain_intact()
    log = _log()
    log.entries[2].args_json = '{"i":2 }'
    assert not log.chain_intact()


def test_the_log_keeps_what_was_sent_when_the_caller_edits_its_dict_later() -> None:
    log = ActionLog()
    args = {"cursor": None, "nested": {"seen": []}}
    first = log.open_entry("fetch", args)
    log.close_entry(first, True, "ok")
    args["cursor"] = "next"  # a policy reusing its dict for the next call
    args["nested"]["seen"].append(1)
    second = log.open_entry("fetch", args)
    log.close_entry(second, True, "ok")
    assert first.args == {"cursor": None, "nested": {"seen": []}}
    assert second.args == {"cursor": "next", "nested": {"seen": [1]}}
    assert log.chain_intact()
    first.args["cursor"] = "edited"  # a reader's copy: the record is unchanged
    assert first.args["cursor"] is None and log.chain_intact()


def test_what_an_entry_shows_is_what_its_hash_covers() -> None:
    log = ActionLog()
    e = log.open_entry("tool", {"a": 1}, '{"a":2}')  # the text given is the record
    log.close_entry(e, True, "ok")
    assert e.args == {"a": 2} and log.as_list()[0]["args"] == {"a": 2}
    assert log.chain_intact()


def test_an_entry_left_open_is_sealed_into_the_chain() -> None:
    log = ActionLog()
    left = log.open_entry("tool", {"i": 0})  # its handler raised past the episode
    nxt = log.open_entry("tool", {"i": 1})
    log.close_entry(nxt, True, "ok")
    assert left.hash and nxt.prev_hash == left.hash
    assert log.chain_intact()
    left.summary = "done"  # rewriting the open entry afterwards is caught
    assert not log.chain_intact()


def test_each_entry_is_hashed_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from datagauntlet.core import action_log

    calls = []
    real = action_log._digest
    monkeypatch.setattr(action_log, "_digest", lambda e, t: calls.append(e.seq) or real(e, t))
    log = _log()
    assert calls == [0, 1, 2, 3]
    monkeypatch.setattr(action_log, "_digest", real)
    assert log.chain_intact()


def _reference_digest(entry) -> str:  # type: ignore[no-untyped-def]
    """The entry hash as the log defines it: sha256 of the canonical JSON of every field but
    the arguments, a newline, then the arguments' canonical JSON."""
    import hashlib

    from datagauntlet.core.action_log import canonical_json

    body = entry.body()
    del body["args"]
    line = canonical_json(body) + "\n" + canonical_json(entry.args)
    return hashlib.sha256(line.encode("utf-8", "surrogatepass")).hexdigest()


def test_entry_hashes_are_the_defined_sha256_for_every_shape_of_entry() -> None:
    from datagauntlet.core.action_log import _ONE_SLICE

    log = ActionLog()
    cases = [
        ("tool", {"a": 1}, True, "ok", None),
        ('t\u00fcl "quoted"', {"lone": "\ud800"}, False, "summary \udc00 \n", {"z": [1], "a": 2}),
        ("big", {"blob": "\u00e9" * (_ONE_SLICE + 17)}, True, "", {"rows": list(range(5))}),
        ("empty", {}, True, "x" * 300, {}),
        # a large submission with lone surrogates in its arguments and its summary: hashed a
        # slice at a time, still the same bytes
        ("big lone", {"blob": "\udc80" + "y" * (_ONE_SLICE + 3)}, False, "s \ud800", None),
        # fields of other types than the usual (a dict subclass): the general encoding
        ("other types", {"a": 1}, True, "ok", OrderedDict(b=1, a=[2])),
    ]
    for tool, args, executed, summary, detail in cases:
        entry = log.open_entry(tool, args)
        log.close_entry(entry, executed, summary, detail)
    log.open_entry("left open", {"i": 1})
    assert log.chain_intact()
    for entry in log.entries:
        assert entry.hash == _reference_digest(entry), entry.tool


# Found by the full mutation run (docs/mutation/survivors.md).
def test_an_entry_left_open_is_sealed_once_however_often_the_chain_is_read() -> None:
    log = ActionLog()
    log.open_entry("a", {"n": 1})  # never closed
    assert log.chain_intact() and log.chain_intact()
    log.close_entry(log.open_entry("b", {}), True, "ok")
    assert log.chain_intact() and len(log) == 2


def test_arguments_of_exactly_the_bound_are_kept_and_one_more_are_cut() -> None:
    from datagauntlet.core.action_log import bounded_args, canonical_json

    args = {"q": "x" * 20}
    text = canonical_json(args)
    assert bounded_args(args, text, len(text)) is args
    assert bounded_args(args, text, len(text) - 1)["_characters"] == len(text)
    for limit, kept in ((len(text), True), (len(text) - 1, False)):
        log = ActionLog()
        log.open_entry("t", args)
        log.bound_newest(limit)
        assert (log.entries[-1].args == args) is kept, limit


def test_an_open_entry_reads_pending_and_not_executed_until_it_is_closed() -> None:
    log = ActionLog()
    entry = log.open_entry("t", {"a": 1})
    assert (entry.seq, entry.tool, entry.executed, entry.summary) == (0, "t", False, "pending")
    assert entry.prev_hash == "genesis" and entry.detail == {}
    log.close_entry(entry, True, "done", {"rows": 2})
    assert (entry.executed, entry.summary, entry.detail) == (True, "done", {"rows": 2})


def test_only_the_newest_entry_can_be_closed() -> None:
    log = ActionLog()
    first = log.open_entry("a", {})
    log.close_entry(first, True, "ok")
    log.open_entry("b", {})
    with pytest.raises(RuntimeError) as caught:
        log.close_entry(first, True, "again")
    assert str(caught.value) == "only the newest log entry can be closed"
