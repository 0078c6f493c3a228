"""A hash-chained log of every tool call, written before the call takes effect.

Graders read this log (and the world's state), never the agent's prose. Each entry commits to
the previous one, so editing, dropping or reordering an entry breaks the chain.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

try:
    from _json import make_encoder as c_make_encoder
except ImportError:  # pragma: no cover - CPython always has it
    c_make_encoder = None

GENESIS = "genesis"


_SEPARATORS = (",", ":")


def _encoder(default: Callable[[Any], Any], allow_nan: bool) -> Callable[[Any], str]:
    """json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, ...) as a
    function, with the encoder's options bound once: json.dumps builds a JSONEncoder per call,
    which costs more than encoding a tool call's arguments. Same text, same exceptions."""
    if c_make_encoder is None:  # an interpreter without the C accelerator: the standard path
        return functools.partial(
            json.dumps,
            sort_keys=True,
            separators=_SEPARATORS,
            ensure_ascii=False,
            default=default,
            allow_nan=allow_nan,
        )
    make = c_make_encoder
    # Built once, without json.dumps's markers dict (which it fills and empties for every list
    # and dict): a circular value then recurses until Python's recursion limit stops it.
    fast = make(None, default, encode_basestring, None, ":", ",", True, False, allow_nan)

    def encode(value: Any) -> str:
        if isinstance(value, str):  # as JSONEncoder.encode: a bare string is one escape
            return encode_basestring(value)
        try:
            return "".join(fast(value, 0))
        except RecursionError:
            # Circular or nested too deep: again with a fresh markers dict, so the error is
            # the one dumps raises (ValueError for a circular value, RecursionError else).
            chunks = make({}, default, encode_basestring, None, ":", ",", True, False, allow_nan)
            return "".join(chunks(value, 0))

    return encode


# canonical_json(value): sorted keys, no spaces, text as is (ensure_ascii off); whatever JSON
# lacks is written as its str(). The one serialisation everything hashed goes through.
canonical_json = _encoder(str, True)
_strict = _encoder(json.JSONEncoder().default, False)


def strict_canonical_json(value: Any) -> str:
    """canonical_json of plain JSON only: raises ValueError for NaN, Infinity, non-JSON types
    or nesting too deep. For plain JSON the text is the same as canonical_json's."""
    try:
        return _strict(value)
    except (TypeError, RecursionError) as exc:
        raise ValueError(str(exc) or type(exc).__name__) from None


def canonical_prefix(value: Any, limit: int) -> str:
    """canonical_json(value) when it is at most `limit` characters long, else a prefix of it at
    least `limit` long, made without writing the rest: a log summary of a page of 100 records
    needs its first 240 characters, not all of them.

    A small dict (no long string, no list of more than a few items) is encoded whole. Else the
    top-level dict or list is walked key by key (in canonical order); a long string is cut
    before it is escaped (escaping only lengthens it); a list inside it is encoded a few whole
    items at a time, as many as the limit needs. Anything that is not plain JSON is left to
    canonical_json, whole."""
    if type(value) is dict and _small(value, limit):
        return canonical_json(value)  # one C call costs less than walking a small result
    parts: list[str] = []
    try:
        _prefix_into(value, limit, True, parts)
    except _NotPlain:
        return canonical_json(value)
    return "".join(parts)


class _NotPlain(Exception):
    pass


_SMALL_ITEMS = 8


def _small(value: dict[Any, Any], limit: int) -> bool:
    """Whether encoding all of `value` costs about what its prefix would: no string longer
    than the limit, no list or dict of more than a few items, at its top level."""
    for v in value.values():
        kind = type(v)
        if kind is str:
            if len(v) > limit:
                return False
        elif (kind is list or kind is dict) and len(v) > _SMALL_ITEMS:
            return False
    return True


def _prefix_into(value: Any, budget: int, top: bool, parts: list[str]) -> int:
    """Append the start of value's canonical text to parts; return the budget left (<= 0 once
    the text is long enough: the caller then stops, adding no closing bracket)."""
    kind = type(value)
    if kind is str:
        if len(value) > budget:  # the cut string's text lacks its closing quote: a prefix
            text = encode_basestring(value[: max(budget, 0)])[:-1]
        else:
            text = encode_basestring(value)
    elif kind is int:
        text = int.__repr__(value)  # what the encoder writes for an int
    elif kind is bool or value is None:
        text = "null" if value is None else "true" if value else "false"
    elif kind is float:
        text = canonical_json(value)
    elif kind is list and not top:
        return _list_prefix(value, budget, parts)
    elif kind is list:
        parts.append("[")
        budget -= 1
        for i, item in enumerate(value):
            if budget <= 0:
                return budget
            if i:
                parts.append(",")
                budget -= 1
            budget = _prefix_into(item, budget, False, parts)
        if budget <= 0:
            return budget
        parts.append("]")
        return budget - 1
    elif kind is dict:
        if not top:
            text = canonical_json(value)  # one C call: a record, a row, a small object
        elif not all(type(k) is str for k in value):
            raise _NotPlain  # canonical_json's own key handling decides
        else:
            parts.append("{")
            budget -= 1
            for i, key in enumerate(sorted(value)):
                if budget <= 0:
                    return budget
                head = ("," if i else "") + encode_basestring(key) + ":"
                parts.append(head)
                budget = _prefix_into(value[key], budget - len(head), False, parts)
            if budget <= 0:
                return budget
            parts.append("}")
            return budget - 1
    else:
        raise _NotPlain
    parts.append(text)
    return budget - len(text)


def _list_prefix(items: list[Any], budget: int, parts: list[str]) -> int:
    """A nested list, encoded whole items at a time in a few C calls: the first four, then as
    many more as the length so far says the budget needs, so a page of 1,000 records costs
    about what its first few cost."""
    parts.append("[")
    budget -= 1
    start, n, step, written = 0, len(items), 4, 0
    while start < n:
        if budget <= 0:
            return budget
        text = canonical_json(items[start : start + step])[1:-1]  # items, comma-joined
        if start:
            text = "," + text
        parts.append(text)
        budget -= len(text)
        written += len(text)
        start += step
        step = max(4, budget * start // max(written, 1) + 1)  # enough at the mean length
    if budget <= 0:
        return budget
    parts.append("]")
    return budget - 1


def text_sha256(text: str, chunk: int = 1 << 20) -> str:
    """sha256 of `text` as UTF-8, encoded a slice at a time (no second copy of a large text)."""
    digest = hashlib.sha256()
    for start in range(0, len(text), chunk):
        digest.update(text[start : start + chunk].encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def bounded_args(args: Any, text: str, limit: int) -> Any:
    """`args` itself when its canonical `text` is at most `limit` characters; else a stand-in
    under `limit` that commits to it: a prefix of half the limit, the full length and a sha256
    of the text.

    Refused calls are logged like this: the log must say what was sent, but a client that
    sends 24 MB bodies over and over must not make the log keep every one of them."""
    if len(text) <= limit:
        return args
    return {"_preview": text[: limit // 2], "_characters": len(text), "_sha256": text_sha256(text)}


def _head(entry: Entry) -> str:
    """canonical_json of every field but the arguments, spelled out for the usual field types
    (sorted keys, as canonical_json orders them): the same text without a dict and a sort."""
    detail, executed, seq = entry.detail, entry.executed, entry.seq
    tool, summary, prev = entry.tool, entry.summary, entry.prev_hash
    if (
        type(detail) is dict
        and type(executed) is bool
        and type(seq) is int
        and type(tool) is str
        and type(summary) is str
        and type(prev) is str
    ):
        return (
            f'{{"detail":{canonical_json(detail) if detail else "{}"},'
            f'"executed":{"true" if executed else "false"},'
            f'"prev_hash":{encode_basestring(prev)},"seq":{seq},'
            f'"summary":{encode_basestring(summary)},"tool":{encode_basestring(tool)}}}'
        )
    return canonical_json(
        {
            "seq": seq,
            "tool": tool,
            "executed": executed,
            "summary": summary,
            "detail": detail,
            "prev_hash": prev,
        }
    )


def _digest(entry: Entry, args_json: str) -> str:
    # sha256 of head + "\n" + args as UTF-8. surrogatepass: a lone surrogate an agent sent
    # (legal in JSON text) must not crash the log.
    if len(args_json) <= _ONE_SLICE:
        line = f"{_head(entry)}\n{args_json}"
        return hashlib.sha256(line.encode("utf-8", "surrogatepass")).hexdigest()
    # A large submission: the same bytes, encoded a slice at a time, never a second whole copy.
    h = hashlib.sha256(_head(entry).encode("utf-8", "surrogatepass") + b"\n")
    for start in range(0, len(args_json), _ONE_SLICE):
        h.update(args_json[start : start + _ONE_SLICE].encode("utf-8", "surrogatepass"))
    return h.hexdigest()


_ONE_SLICE = 1 << 20


@dataclass(slots=True)
class Entry:
    """One call. The arguments are kept as the canonical text the hash covers, not as the
    caller's objects: a caller that reuses or edits its dict after the call cannot rewrite
    what the log says was sent. `args` reads a fresh copy parsed from that text."""

    seq: int
    tool: str
    args_json: str
    executed: bool
    summary: str
    prev_hash: str
    hash: str = ""
    # Env-specific facts about the call (e.g. tables a query read); part of the hashed body.
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def args(self) -> Any:
        return json.loads(self.args_json)

    @args.setter
    def args(self, value: Any) -> None:
        self.args_json = canonical_json(value)

    def body(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "tool": self.tool,
            "args": self.args,
            "executed": self.executed,
            "summary": self.summary,
            "detail": self.detail,
            "prev_hash": self.prev_hash,
        }

    def as_dict(self) -> dict[str, Any]:
        return {**self.body(), "hash": self.hash}


class ActionLog:
    """Append-only; `open_entry` is called before the effect, `close_entry` records the outcome.

    An entry is hashed once, when it is closed, so the summary of the result is covered too.
    An entry left open (its tool raised past the episode) is sealed as it stands, pending and
    not executed, before anything reads the chain or a later entry links to it.
    """

    __slots__ = ("_unsealed", "entries")

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self._unsealed: Entry | None = None

    def _seal_open(self) -> None:
        entry = self._unsealed
        if entry is not None:
            self._unsealed = None
            entry.hash = _digest(entry, entry.args_json)

    def __len__(self) -> int:
        return len(self.entries)

    def open_entry(self, tool: str, args: Any, args_json: str | None = None) -> Entry:
        """Log a call before it runs. `args_json`, when given, is canonical_json(args), made by
        the caller already (the log keeps that text: it is what the entry commits to)."""
        if self._unsealed is not None:
            self._seal_open()
        entries = self.entries
        prev = entries[-1].hash if entries else GENESIS
        text = canonical_json(args) if args_json is None else args_json
        entry = Entry(len(entries), tool, text, False, "pending", prev)
        entries.append(entry)
        self._unsealed = entry
        return entry

    def close_entry(
        self, entry: Entry, executed: bool, summary: str, detail: dict[str, Any] | None = None
    ) -> None:
        if entry is not self.entries[-1]:
            raise RuntimeError("only the newest log entry can be closed")
        entry.executed = executed
        entry.summary = summary
        if detail:
            entry.detail = detail
        self._unsealed = None
        entry.hash = _digest(entry, entry.args_json)

    def bound_newest(self, limit: int) -> None:
        """Replace the open newest entry's arguments by `bounded_args` (for a call that was
        refused once its handler ran: nothing happened, so only a trace of it is kept)."""
        entry = self.entries[-1]
        if len(entry.args_json) > limit:
            entry.args = bounded_args(None, entry.args_json, limit)

    def executed(self, tool: str | None = None) -> list[Entry]:
        return [e for e in self.entries if e.executed and (tool is None or e.tool == tool)]

    def chain_intact(self) -> bool:
        self._seal_open()
        prev = GENESIS
        for i, entry in enumerate(self.entries):
            if entry.seq != i or entry.prev_hash != prev:
                return False
            if entry.hash != _digest(entry, entry.args_json):
                return False
            prev = entry.hash
        return True

    def as_list(self) -> list[dict[str, Any]]:
        self._seal_open()
        return [e.as_dict() for e in self.entries]
