"""One declaration per env: everything a front door, the CLI or packaging needs to know.

Each env folder holds a `registration.py` defining `REGISTRATION = Registration(...)`, which
imports nothing but this module, so listing envs stays fast. The registry finds it by
scanning the env packages (`core/registry.py`); the env class names it as its
`registration`, and its id, reference and limits come from it. The top-level verifiers
distributions under environments/ and the docs markers are checked against the
registrations by one test (tests/core/test_registration.py).

Hooks are "module:attribute" strings, imported only when used:
- `command`: a CLI subcommand module (NAME, HELP, add_arguments, run) named after the env;
- `http_api`: the env's native HTTP API, a `core.http_api.HttpHandler`;
- `final_answer`: a `core.final_answer.FinalAnswer`, how a final message is read;
- `report_tables`: a function returning the env's own tables by name (`core/report.py`).

`remote_config` lists the config keys a remote client may set (core/remote_config.py).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.core.limits import Limits

_ID = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Registration:
    id: str
    entry_point: str  # "package.module:EnvClass"
    reference: str = "careful"  # the policy that scores 1.0 on every task
    limits: Limits = field(default_factory=Limits)
    # Bump `version` whenever the generator or the grader changes what a task is or how it is
    # scored (docs/versioning.md); `generator_version` tracks the world generator alone.
    version: str = "1"
    generator_version: str = "1"
    summary: str = ""
    command: str | None = None  # module of the env's own CLI subcommand
    http_api: str | None = None  # "module:function" of its native HTTP API
    final_answer: str | None = None  # "module:attribute" of its FinalAnswer
    report_tables: str | None = None  # "module:function" of its own tables
    has_verifiers_module: bool = True  # a top-level module for `vf-eval <module>`
    # Every step is in-memory work of microseconds that never blocks (no SQL, no files, no
    # subprocess): a door serving many sessions may then run steps on its event loop instead
    # of handing each to the episode's own thread.
    fast_steps: bool = False
    # Config keys a remote client may set (a session server's sessions, a run file being
    # re-scored): never one naming a module or a path (core/remote_config.py). `max_turns` is
    # always safe.
    remote_config: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise ValueError(f"env id {self.id!r} must be lower-case words joined by '-'")
        if "family_module" in self.remote_config:
            raise ValueError(f"{self.id}: family_module names a module; it is never remote-safe")
        if ":" not in self.entry_point:
            raise ValueError(f"{self.id}: entry_point must be 'module:Class'")

    @property
    def module_name(self) -> str:
        """The top-level module verifiers loads the env by (`vf-eval dirty_integration`)."""
        return self.id.replace("-", "_")

    def load_class(self) -> Any:
        return load(self.entry_point)


def load(target: str) -> Any:
    """The attribute a "module:attribute" string names."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
