"""One episode: a fresh world, its tools, its action log, and its score.

`Episode.call` is the only door into the world. It checks the call against the tool's schema,
writes the log entry before anything happens, and turns every kind of bad input into
`{"error": ...}`: an agent can never raise an exception through it.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from datagauntlet.core.action_log import ActionLog, canonical_json, strict_canonical_json
from datagauntlet.core.score import Score
from datagauntlet.core.tools import Tool, check_arguments

if TYPE_CHECKING:
    from datagauntlet.core.env import Environment

SUMMARY_CHARS = 240


@dataclass(frozen=True)
class Task:
    """A deterministic task descriptor: the seed is everything; the id carries no answer."""

    id: str
    seed: int
    split: str
    index: int

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "seed": self.seed, "split": self.split, "index": self.index}


class ToolError(Exception):
    """Raised by a tool handler to refuse a call; the world must not have changed."""


def summarize(result: dict[str, Any]) -> str:
    text = canonical_json(result)
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 3] + "..."


class Episode(ABC):
    """Subclasses declare `TOOLS`, implement `tool_<name>` handlers, `_grade` and `fingerprint`.

    Handlers return a JSON-serialisable dict. They raise `ToolError` to refuse a call (nothing
    changed), or return a dict with an "error" key for a call that happened and failed (a
    timeout that still spent quota, say).
    """

    TOOLS: ClassVar[tuple[Tool, ...]] = ()
    # In process nothing else bounds a runaway policy (front doors enforce max_turns), so an
    # episode may set a call limit; reaching it ends the episode ("call limit").
    max_calls: int | None = None

    def __init__(self, env: Environment, task: Task) -> None:
        self.env = env
        self.task = task
        self.log = ActionLog()
        self.done = False
        self.stop_reason: str | None = None
        self._detail: dict[str, Any] = {}
        self._tools = {t.name: t for t in self.TOOLS}

    # --- what an agent sees -------------------------------------------------------------
    @property
    @abstractmethod
    def system_prompt(self) -> str: ...

    @property
    @abstractmethod
    def prompt(self) -> str: ...

    @property
    def tool_specs(self) -> list[dict[str, Any]]:
        return [t.spec() for t in self.TOOLS]

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.TOOLS]

    # --- the one door into the world -----------------------------------------------------
    def call(self, name: Any, args: Any = None) -> dict[str, Any]:
        """Run one tool call. Never raises for anything an agent can send."""
        result = self._call(name, args)
        if not self.done and self.max_calls is not None and self.calls >= self.max_calls:
            self.finish("call limit")
        return result

    def _call(self, name: Any, args: Any) -> dict[str, Any]:
        if args is None:
            args = {}
        if isinstance(args, str):
            try:
                args = loads_strict(args) if args.strip() else {}
            except ValueError as exc:
                return self._refuse(str(name), args, f"arguments are not valid JSON: {exc}")
        tool_name = name if isinstance(name, str) else repr(name)
        try:  # serialised once: the check that arguments are plain JSON, and the log's text
            args_json = strict_canonical_json(args)
        except ValueError:
            return self._refuse(
                tool_name, args, "arguments must be plain JSON: no NaN, Infinity or deep nesting"
            )
        if self.done:
            return self._refuse(
                tool_name, args, f"the episode is over ({self.stop_reason}); no more tool calls"
            )
        tool = self._tools.get(tool_name)
        if tool is None:
            return self._refuse(
                tool_name, args, f"unknown tool {tool_name!r}; available: {self.tool_names}"
            )
        problem = check_arguments(tool, args)
        if problem:
            return self._refuse(tool_name, args, f"{tool_name}: {problem}")
        entry = self.log.open_entry(tool_name, args, args_json)
        self._detail = {}
        handler: Callable[..., dict[str, Any]] = getattr(self, f"tool_{tool_name}")
        try:
            result = handler(**args)
        except ToolError as exc:
            result = {"error": str(exc)}
            self.log.close_entry(entry, False, summarize(result), self._detail)
            return result
        except Exception as exc:  # a bug in the env must not reach the agent as an exception
            result = {"error": f"internal error in {tool_name}: {type(exc).__name__}: {exc}"}
            self.log.close_entry(entry, False, summarize(result), {"internal_error": True})
            return result
        self.log.close_entry(entry, True, summarize(result), self._detail)
        return result

    def _refuse(self, name: str, args: Any, message: str) -> dict[str, Any]:
        entry = self.log.open_entry(name, args if _jsonable(args) else _safe_repr(args))
        result = {"error": message}
        self.log.close_entry(entry, False, summarize(result))
        return result

    def note(self, **detail: Any) -> None:
        """Attach facts to the log entry of the call being handled (e.g. tables read)."""
        self._detail.update(detail)

    def finish(self, reason: str) -> None:
        self.done = True
        self.stop_reason = reason

    # --- grading -------------------------------------------------------------------------
    def score(self) -> Score:
        return self._grade()

    @abstractmethod
    def _grade(self) -> Score: ...

    @abstractmethod
    def fingerprint(self) -> str:
        """A digest of the world's state, excluding the log: equal before and after a refusal."""

    @property
    def calls(self) -> int:
        return len(self.log)


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _safe_repr(value: Any) -> str:
    try:
        text = repr(value)
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply>"
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 3] + "..."


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key[:40]!r} in one object")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads_strict(text: str) -> Any:
    """Parse JSON, refusing what `json.loads` lets through: duplicate keys (the last one would
    silently win), NaN and Infinity; nesting too deep for the parser is a ValueError too."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None
