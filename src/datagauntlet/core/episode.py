"""One episode: a fresh world, its toolsets and tools, its action log, and its score.

`Episode.call` is the only door into the world. It checks the call against the tool's schema,
writes the log entry before anything happens, and turns every kind of bad input into
`{"error": ...}`: an agent can never raise an exception through it. `Episode.close` releases
what the episode holds; every holder of an episode calls it, in a `finally`.
"""

from __future__ import annotations

import hashlib
from abc import ABCMeta, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from datagauntlet.core.action_log import (
    ActionLog,
    bounded_args,
    canonical_json,
    strict_canonical_json,
)
from datagauntlet.core.call_text import (
    REFUSED_ARGS_CHARS,
    TOOL_NAME_CHARS,
    fresh_copy,
    jsonable,
    loads_strict,
    logged_name,
    safe_repr,
    summarize,
)
from datagauntlet.core.final_answer import FinalAnswer
from datagauntlet.core.score import Score
from datagauntlet.core.secret import scrub_seeds
from datagauntlet.core.task import EpisodeOwner, Task
from datagauntlet.core.tools import Tool, check_arguments
from datagauntlet.core.toolset import BoundTool, ToolError, Toolset, declared_tools

if TYPE_CHECKING:
    from datagauntlet.core.config import EnvConfig

__all__ = [
    "Episode",
    "EpisodeClosed",
    "Task",
    "ToolError",
    "fresh_copy",
    "loads_strict",
    "summarize",
]

CLOSED_ERROR = "the episode is closed; no more tool calls"

ConfigT = TypeVar("ConfigT", bound="EnvConfig")


class EpisodeClosed(RuntimeError):
    """A closed episode was asked for something it can no longer compute."""


class _OpensAfterInit(ABCMeta):
    """Opens an episode's toolsets once its `__init__` (a subclass's included) has finished."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        episode = super().__call__(*args, **kwargs)
        episode._open()
        return episode


class Episode(Generic[ConfigT], metaclass=_OpensAfterInit):
    """Subclasses return their toolsets from `toolsets()`, declare their own tools as `@tool`
    methods, and implement `system_prompt`, `prompt`, `_grade` and `fingerprint`.

    Handlers return a JSON-serialisable dict. They raise `ToolError` to refuse a call (nothing
    changed), or return a dict with an "error" key for a call that happened and failed (a
    timeout that still spent quota, say). Resources the env holds outside its toolsets are
    freed in `release`.
    """

    # Tool names listed here come first in `tool_specs`, in this order; the rest follow in
    # declaration order (toolsets first, then the episode's own tools).
    TOOL_ORDER: ClassVar[tuple[str, ...]] = ()

    def __init__(self, env: EpisodeOwner, task: Task) -> None:
        self.env = env
        self.config: ConfigT = env.config
        self.task = task
        self.log = ActionLog()
        self.done = False
        self.stop_reason: str | None = None
        self.closed = False
        self._detail: dict[str, Any] = {}
        self._tools: dict[str, BoundTool] = {}
        self._specs: list[dict[str, Any]] = []
        self._opened: list[Toolset] = []
        self._max_executed: int | None = None
        self._final_answer: FinalAnswer | None = None
        self._content_hash: str | None = None
        self._last_score: tuple[int, Score] | None = None
        # In process nothing else bounds a runaway policy (front doors enforce max_turns):
        # the env's limits set a call backstop, fixed once the world is built (`_open`).
        self.max_calls: int | None = None
        self.executed_calls = 0

    # --- lifecycle -------------------------------------------------------------------------
    def toolsets(self) -> list[Toolset]:
        """The toolsets this episode is made of: opened in order, closed in reverse."""
        return []

    def _open(self) -> None:
        tools: dict[str, BoundTool] = {}
        try:
            for toolset in self.toolsets():
                toolset.attach(self.note)
                self._opened.append(toolset)
                toolset.open()
                for bound in toolset.tools():
                    _add_tool(tools, bound, type(toolset).__name__)
            for bound in declared_tools(self):
                _add_tool(tools, bound, type(self).__name__)
        except BaseException:
            self.close()
            raise
        self._final_answer = self.env.final_answer
        limits = self.env.limits
        self.max_calls = limits.calls_allowed(self)
        self._max_executed = self.config.max_turns if limits.executed_calls_are_turns else None
        first = [tools.pop(n) for n in self.TOOL_ORDER if n in tools]
        self._tools = {b.tool.name: b for b in [*first, *tools.values()]}
        self._specs = [b.tool.spec() for b in self._tools.values()]

    def close(self) -> None:
        """Release everything the episode holds. Safe to call twice; afterwards every tool
        call is answered with an error and changes nothing."""
        if self.closed:
            return
        self.closed = True
        problems: list[Exception] = []
        for toolset in reversed(self._opened):
            try:
                toolset.close()
            except Exception as exc:  # release the rest before reporting it
                problems.append(exc)
            toolset.detach()
        self._opened.clear()
        try:
            self.release()
        except Exception as exc:
            problems.append(exc)
        self._drop_handlers()
        if problems:
            raise problems[0]

    def _drop_handlers(self) -> None:
        """A closed episode answers no call, so its handlers can go. Each is a bound method of
        the episode or of a toolset the episode holds: a reference cycle, which kept the whole
        world alive until the cyclic collector found it (in a server, one long pause freeing
        many worlds at once). Without them a closed world is freed when its last user drops it.
        The tools and their specs stay readable."""
        self._tools = {name: BoundTool(b.tool, _refuse_closed) for name, b in self._tools.items()}

    def release(self) -> None:
        """Free resources the env holds outside its toolsets (called once, by `close`)."""

    def __enter__(self) -> Episode[ConfigT]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- what an agent sees ---------------------------------------------------------------
    @property
    @abstractmethod
    def system_prompt(self) -> str: ...

    @property
    @abstractmethod
    def prompt(self) -> str: ...

    @property
    def tools(self) -> tuple[Tool, ...]:
        return tuple(b.tool for b in self._tools.values())

    @property
    def tool_specs(self) -> list[dict[str, Any]]:
        return fresh_copy(self._specs)  # the caller's to keep or edit

    @property
    def tool_names(self) -> list[str]:
        return list(self._tools)

    def bound_tool(self, name: str) -> BoundTool | None:
        """The declaration and handler behind `name`, or None."""
        return self._tools.get(name)

    # --- the one door into the world -------------------------------------------------------
    def call(self, name: Any, args: Any = None) -> dict[str, Any]:
        """Run one tool call. Never raises for anything an agent can send."""
        if self.closed:
            return {"error": CLOSED_ERROR}
        entries = self.log.entries
        before = len(entries)
        result = self._call(name, args)
        self._check_limits(len(entries) > before and entries[-1].executed)
        return result

    def _check_limits(self, executed: bool) -> None:
        if not self.done and self.max_calls is not None and self.calls >= self.max_calls:
            self.finish("call limit")
        if executed:
            self.executed_calls += 1
        limit = self._max_executed
        if not self.done and limit is not None and self.executed_calls >= limit:
            self.finish("turn limit")

    def _call(self, name: Any, args: Any) -> dict[str, Any]:
        if args is None:
            args = {}
        if isinstance(args, str):
            try:
                args = loads_strict(args) if args.strip() else {}
            except ValueError as exc:
                return self._refuse(logged_name(name), args, f"arguments are not valid JSON: {exc}")
        tool_name = (
            name if type(name) is str and len(name) <= TOOL_NAME_CHARS else logged_name(name)
        )
        try:  # serialised once: the check that arguments are plain JSON, and the log's text
            args_json = strict_canonical_json(args)
        except ValueError:
            return self._refuse(
                tool_name, args, "arguments must be plain JSON: no NaN, Infinity or deep nesting"
            )
        if self.done:
            return self._refuse(
                tool_name,
                args,
                f"the episode is over ({self.stop_reason}); no more tool calls",
                args_json,
            )
        bound = self._tools.get(tool_name)
        if bound is None:
            return self._refuse(
                tool_name,
                args,
                f"unknown tool {tool_name!r}; available: {self.tool_names}",
                args_json,
            )
        tool = bound.tool
        if type(args) is not dict or not tool.accepts(args):  # the message only on failure
            problem = check_arguments(tool, args)
            if problem:
                return self._refuse(tool_name, args, f"{tool_name}: {problem}", args_json)
        log = self.log
        entry = log.open_entry(tool_name, args, args_json)
        del args_json  # the entry holds it: the log's record of the call
        self._detail = {}
        try:
            result = bound.handler(**args)
        except ToolError as exc:
            result = {"error": str(exc)}
            self.log.bound_newest(REFUSED_ARGS_CHARS)
            self.log.close_entry(entry, False, summarize(result), self._detail)
            return result
        except Exception as exc:  # a bug in the env must not reach the agent as an exception
            text = scrub_seeds(str(exc))
            result = {"error": f"internal error in {tool_name}: {type(exc).__name__}: {text}"}
            self.log.bound_newest(REFUSED_ARGS_CHARS)
            self.log.close_entry(entry, False, summarize(result), {"internal_error": True})
            return result
        log.close_entry(entry, True, summarize(result), self._detail)
        return result

    def _refuse(
        self, name: str, args: Any, message: str, args_json: str | None = None
    ) -> dict[str, Any]:
        """Log a refused call (bounded: see REFUSED_ARGS_CHARS) and answer with `message`."""
        if args_json is None:
            args = args if jsonable(args) else safe_repr(args)
            args_json = canonical_json(args)
        logged = bounded_args(args, args_json, REFUSED_ARGS_CHARS)
        entry = self.log.open_entry(name, logged, args_json if logged is args else None)
        result = {"error": message}
        self.log.close_entry(entry, False, summarize(result))
        return result

    @property
    def reads_final_answer(self) -> bool:
        """Whether a model's final message (with no tool call) counts as a submission."""
        return self._final_answer is not None and self._final_answer.tool in self._tools

    def final_answer(self, text: str) -> dict[str, Any] | None:
        """Submit a model's final message as the env declares (one logged, checked call of
        the declared tool); None when this env does not read final messages."""
        declared = self._final_answer
        if declared is None or declared.tool not in self._tools:
            return None
        if self.closed:
            return {"error": CLOSED_ERROR}
        try:
            args = declared.read(text)
        except ValueError as exc:
            result = self._refuse(declared.tool, text, f"the final answer is unreadable: {exc}")
            self._check_limits(False)
            return result
        return self.call(declared.tool, args)

    def note(self, **detail: Any) -> None:
        """Attach facts to the log entry of the call being handled (e.g. tables read)."""
        self._detail.update(detail)

    def finish(self, reason: str) -> None:
        self.done = True
        self.stop_reason = reason

    # --- grading ---------------------------------------------------------------------------
    def score(self) -> Score:
        """The score of the world as it stands. A closed episode returns the last score taken
        if nothing happened since, and raises `EpisodeClosed` otherwise."""
        if self.closed:
            if self._last_score is not None and self._last_score[0] == len(self.log):
                return self._last_score[1]
            raise EpisodeClosed("the episode was closed before it was scored")
        score = self._grade().stamped(self.version_stamp())
        self._last_score = (len(self.log), score)
        return score

    def version_stamp(self) -> dict[str, str]:
        """What this episode's scores are stamped with: the code's and the task's versions."""
        return {**self.env.versions(), "task_hash": self.content_hash}

    @property
    def content_hash(self) -> str:
        """A digest of what the task is: the prompts, the tools and the generated world (the
        env's `world_content`). It changes whenever the generator makes a different world."""
        if self._content_hash is None:
            self._content_hash = self.env.task_hash(self.task, self._hash_content)
        return self._content_hash

    def _hash_content(self) -> str:
        payload = {
            "env": self.env.id,
            "config": self.config.as_dict(),
            # the seed is hashed, never shown: the digest is as hard to invert as the seed to guess
            "task": {k: v for k, v in self.task.full_dict().items() if k != "ref"},
            "system_prompt": self.system_prompt,
            "prompt": self.prompt,
            "tools": self._specs,
            "world": self.world_content(),
        }
        text = canonical_json(payload).encode("utf-8", "surrogatepass")
        return hashlib.sha256(text).hexdigest()[:32]

    def world_content(self) -> Any:
        """The generated world as JSON-able data (its fixed content, not its state), for the
        content hash. The default is None: prompts and tools alone stand for the task."""
        return None

    @abstractmethod
    def _grade(self) -> Score: ...

    @abstractmethod
    def fingerprint(self) -> str:
        """A digest of the world's state, excluding the log: equal before and after a refusal."""

    def toolset_digests(self) -> list[str]:
        """State digests of the open toolsets, for `fingerprint` to include."""
        return [t.state_digest() for t in self._opened]

    @property
    def calls(self) -> int:
        return len(self.log)


def _refuse_closed(**_args: Any) -> dict[str, Any]:
    return {"error": CLOSED_ERROR}  # never reached through `call`, which refuses first


def _add_tool(tools: dict[str, BoundTool], bound: BoundTool, owner: str) -> None:
    if bound.tool.name in tools:
        raise TypeError(f"tool {bound.tool.name!r} is declared twice (again by {owner})")
    tools[bound.tool.name] = bound
