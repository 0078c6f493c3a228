"""A hash-chained log of every tool call, written before the call takes effect.

Graders read this log (and the world's state), never the agent's prose. Each entry commits to
the previous one, so editing, dropping or reordering an entry breaks the chain.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

GENESIS = "genesis"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def strict_canonical_json(value: Any) -> str:
    """canonical_json of plain JSON only: raises ValueError for NaN, Infinity, non-JSON types
    or nesting too deep. For plain JSON the text is the same as canonical_json's."""
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, RecursionError) as exc:
        raise ValueError(str(exc) or type(exc).__name__) from None


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


def _digest(entry: Entry, args_json: str) -> str:
    # Every field but the arguments (already text); sort_keys orders them as body() would.
    head = canonical_json(
        {
            "seq": entry.seq,
            "tool": entry.tool,
            "executed": entry.executed,
            "summary": entry.summary,
            "detail": entry.detail,
            "prev_hash": entry.prev_hash,
        }
    )
    # surrogatepass: a lone surrogate an agent sent (legal in JSON text) must not crash the log.
    # Two updates hash the same bytes as one of head + "\n" + args, without copying the args.
    h = hashlib.sha256(head.encode("utf-8", "surrogatepass") + b"\n")
    h.update(args_json.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass
class Entry:
    seq: int
    tool: str
    args: Any
    executed: bool
    summary: str
    prev_hash: str
    hash: str = ""
    # Env-specific facts about the call (e.g. tables a query read); part of the hashed body.
    detail: dict[str, Any] = field(default_factory=dict)
    # The arguments' canonical text, made once per call and dropped once the entry is closed:
    # a large submission is serialised once, and not kept twice. chain_intact re-derives it.
    args_json: str = field(default="", repr=False, compare=False)

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
        """`args_json`, when given, must be canonical_json(args) (saves serialising twice)."""
        self._seal_open()
        prev = self.entries[-1].hash if self.entries else GENESIS
        text = canonical_json(args) if args_json is None else args_json
        entry = Entry(len(self.entries), tool, args, False, "pending", prev, args_json=text)
        self.entries.append(entry)
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
        entry.args_json = ""

    def bound_newest(self, limit: int) -> None:
        """Replace the open newest entry's arguments by `bounded_args` (for a call that was
        refused once its handler ran: nothing happened, so only a trace of it is kept)."""
        entry = self.entries[-1]
        logged = bounded_args(entry.args, entry.args_json, limit)
        if logged is not entry.args:
            entry.args = logged
            entry.args_json = canonical_json(logged)

    def executed(self, tool: str | None = None) -> list[Entry]:
        return [e for e in self.entries if e.executed and (tool is None or e.tool == tool)]

    def chain_intact(self) -> bool:
        self._seal_open()
        prev = GENESIS
        for i, entry in enumerate(self.entries):
            digest = _digest(entry, canonical_json(entry.args))
            if entry.seq != i or entry.prev_hash != prev or entry.hash != digest:
                return False
            prev = entry.hash
        return True

    def as_list(self) -> list[dict[str, Any]]:
        self._seal_open()
        return [e.as_dict() for e in self.entries]
