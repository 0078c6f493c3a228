"""What an episode is made from: its task (a seed, the split and its place there; the seed is
everything, the id carries no answer) and the env that owns it, as the protocol the episode
reads, so that the episode, below the env, does not import it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from datagauntlet.core.final_answer import FinalAnswer
    from datagauntlet.core.limits import Limits


@dataclass(frozen=True)
class Task:
    """A deterministic task descriptor: the seed is everything; the id carries no answer."""

    id: str
    seed: int
    split: str
    index: int

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "seed": self.seed, "split": self.split, "index": self.index}


class EpisodeOwner(Protocol):
    """What an episode reads from the env that made it (`core.env.Environment` is one); named
    here so that the episode, below the env, does not import it."""

    @property
    def id(self) -> str: ...

    @property
    def config(self) -> Any: ...

    @property
    def limits(self) -> Limits: ...

    @property
    def final_answer(self) -> FinalAnswer | None: ...

    def versions(self) -> dict[str, str]: ...

    def task_hash(self, task: Task, compute: Callable[[], str]) -> str: ...
