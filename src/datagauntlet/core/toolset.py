"""Tools declared together with their handlers, and toolsets that own resources.

A tool is a method decorated with `@tool(description, parameters, mutates=...)`: the schema an
agent sees and the code that answers it live in one place, so a declared tool always has a
handler. A `Toolset` groups tools and owns what they need (a database connection, a directory):
`open()` acquires it when the episode starts, `close()` releases it and is safe to call twice.
An `Episode` is made of toolsets plus its env's own `@tool` methods.

    class SqlToolset(Toolset):
        def open(self) -> None: ...
        def close(self) -> None: ...
        @tool("Run one read-only SQL query.", params({"query": {...}}))
        def run_sql(self, query: str) -> dict: ...   # raise ToolError to refuse

A description or a parameter schema may be a function of the owner (`lambda self: ...`) when it
depends on the instance (a limit from the config); `when=lambda self: ...` makes a tool present
only for some instances.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from datagauntlet.core.tools import Tool, params

__all__ = ["BoundTool", "ToolError", "Toolset", "declared_tools", "params", "tool"]

Handler = Callable[..., dict[str, Any]]
Text = str | Callable[[Any], str]
Schema = dict[str, Any] | Callable[[Any], dict[str, Any]]
F = TypeVar("F", bound=Callable[..., Any])

_MARK = "__datagauntlet_tool__"


class ToolError(Exception):
    """Raised by a tool handler to refuse a call; the world must not have changed."""


@dataclass(frozen=True)
class ToolDeclaration:
    """What `@tool` records on a method; resolved into a `Tool` for one owner instance."""

    method: str
    name: str
    description: Text
    parameters: Schema
    mutates: bool
    when: Callable[[Any], bool] | None

    def resolve(self, owner: Any) -> Tool | None:
        if self.when is not None and not self.when(owner):
            return None
        static = self.__dict__.get("_static")
        if static is not None:
            return static  # type: ignore[no-any-return]
        description = self.description(owner) if callable(self.description) else self.description
        parameters = self.parameters(owner) if callable(self.parameters) else self.parameters
        resolved = Tool(self.name, description, parameters, self.mutates)
        if not callable(self.description) and not callable(self.parameters):
            object.__setattr__(self, "_static", resolved)  # the same for every owner
        return resolved


def tool(
    description: Text,
    parameters: Schema | None = None,
    *,
    mutates: bool = False,
    name: str | None = None,
    when: Callable[[Any], bool] | None = None,
) -> Callable[[F], F]:
    """Declare the decorated method as a tool (named after the method unless `name` is given).

    `parameters` defaults to no arguments; `mutates` says whether a call can change the world.
    """

    def mark(fn: F) -> F:
        declared = ToolDeclaration(
            fn.__name__,
            name or fn.__name__,
            description,
            params({}) if parameters is None else parameters,
            mutates,
            when,
        )
        setattr(fn, _MARK, declared)
        return fn

    return mark


def _declarations(cls: type) -> tuple[ToolDeclaration, ...]:
    """A class's tool declarations in order: base classes first; an override keeps its slot."""
    cached = cls.__dict__.get("_tool_declarations")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    by_method: dict[str, ToolDeclaration] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            declared = getattr(value, _MARK, None)
            if isinstance(declared, ToolDeclaration):
                by_method[attr] = declared
            elif attr in by_method:  # overridden by a plain method: no longer a tool
                del by_method[attr]
    out = tuple(by_method.values())
    type.__setattr__(cls, "_tool_declarations", out)
    return out


@dataclass(frozen=True)
class BoundTool:
    """A tool and the bound method that answers it."""

    tool: Tool
    handler: Handler


def declared_tools(owner: Any) -> Iterator[BoundTool]:
    """The tools `owner` (a toolset or an episode) declares, bound to it."""
    for declared in _declarations(type(owner)):
        resolved = declared.resolve(owner)
        if resolved is not None:
            yield BoundTool(resolved, getattr(owner, declared.method))


class Toolset:
    """A group of tools that owns its resources. Subclasses override `open` and `close`.

    `close` must be safe to call twice and after a failed `open`. A toolset's handlers may
    call `self.note(...)` to attach facts to the log entry of the call being handled.
    """

    _tool_declarations: ClassVar[tuple[ToolDeclaration, ...]]

    def open(self) -> None:
        """Acquire resources; called once when the episode starts."""

    def close(self) -> None:
        """Release resources; idempotent."""

    def tools(self) -> list[BoundTool]:
        return list(declared_tools(self))

    _note_sink: Callable[..., None] | None = None  # set by `attach`

    def note(self, **detail: Any) -> None:
        sink = self._note_sink
        if sink is not None:
            sink(**detail)

    def attach(self, note: Callable[..., None]) -> None:
        """Route `note` to the episode's log entry (the episode calls this before `open`)."""
        self._note_sink = note

    def detach(self) -> None:
        """Forget the episode's log (the episode calls this when it closes: the sink is its
        bound method, a reference cycle otherwise)."""
        self._note_sink = None

    def state_digest(self) -> str:
        """A digest of any state the toolset's tools can change ("" if none): part of the
        episode's fingerprint, so a refused call that changed it is caught."""
        return ""
