"""What an episode is made from: its task (a seed, the split and its place there; the seed is
everything, the id carries no answer) and the env that owns it, as the protocol the episode
reads, so that the episode, below the env, does not import it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from datagauntlet.core.seeding import is_held_out, secret_ref_key, task_ref

if TYPE_CHECKING:
    from datagauntlet.core.final_answer import FinalAnswer
    from datagauntlet.core.limits import Limits


@dataclass(frozen=True)
class Task:
    """A deterministic task descriptor: the seed is everything; the id carries no answer.

    A held-out task (a secret-keyed split, or a family module's split) also has a `ref`: its
    opaque, stable stand-in outside the process. Its seed rebuilds its world, so it never
    leaves the process: `as_dict` (what every door, run file and trace writes) gives the ref
    in its place, and only `full_dict` (for this process and its own workers) carries it.
    """

    id: str
    seed: int
    split: str
    index: int
    ref: str | None = None
    # the env's contamination canary (`Environment.canary`), on every exported record of the
    # task (beside its id and ref) and in no workspace: reciting it means reading task records
    canary: str | None = None

    def __post_init__(self) -> None:
        if self.ref is None and is_held_out(self.split):  # held out however it was built
            ref = task_ref(secret_ref_key(), self.split, self.index, self.seed)
            object.__setattr__(self, "ref", ref)

    @property
    def held_out(self) -> bool:
        return self.ref is not None

    def as_dict(self) -> dict[str, Any]:
        """The task as it may be shown outside the process: a held-out task without its seed."""
        if self.ref is not None:
            out = {"id": self.id, "ref": self.ref, "split": self.split, "index": self.index}
        else:
            out = {"id": self.id, "seed": self.seed, "split": self.split, "index": self.index}
        return out if self.canary is None else {**out, "canary": self.canary}

    def full_dict(self) -> dict[str, Any]:
        """Everything, the seed included: `Task(**full_dict())` is this task. Only for this
        process and the worker processes it starts, never for a reply, a file or a log."""
        out: dict[str, Any] = {
            "id": self.id, "seed": self.seed, "split": self.split, "index": self.index
        }  # fmt: skip
        if self.ref is not None:
            out["ref"] = self.ref
        return out if self.canary is None else {**out, "canary": self.canary}


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
