"""The verifiers `Env` the taskset modules export: the subprocess runtime by default.

verifiers' own default runtime is a remote sandbox (Prime). This package needs none: its
harness runs in the evaluating process and its tools are served by that process on
127.0.0.1, which a program inside a container or a remote sandbox cannot reach. So the default
here is the subprocess runtime, and asking for any other is refused before a rollout starts,
with the reason and the flag to use (rather than every rollout failing on a sandbox it never
needed). For the same reason a harness that executes code (verifiers' `bash`, a coding agent)
is refused: on the subprocess runtime its shell is this host's, outside every sandbox wall, with
this package (and so every world's truth) importable. The default harness calls tools only.
"""

from __future__ import annotations

from typing import Any

from pydantic import model_validator
from verifiers.v1.configs.agent import AgentConfig
from verifiers.v1.env import Env
from verifiers.v1.envs.single_agent.env import SingleAgentEnv, SingleAgentEnvConfig
from verifiers.v1.runtimes import SubprocessConfig

LOCAL_ONLY = (
    "the {runtime} runtime is not supported: datagauntlet's tools are served by this process "
    "on 127.0.0.1 (a container or remote sandbox cannot reach them) and its harness needs no "
    "sandbox; use --env.agent.runtime.type subprocess (the default)"
)


NO_CODE_HARNESS = (
    "harness {harness!r} executes code, and on the subprocess runtime that is a shell on this "
    "host, outside the sandbox, with this package importable; use the default tool-only "
    "harness (omit --env.agent.harness.id)"
)


class LocalEnvConfig(SingleAgentEnvConfig):
    """`SingleAgentEnvConfig` whose one seat runs in the subprocess runtime, and only there."""

    agent: AgentConfig = AgentConfig(runtime=SubprocessConfig())

    @model_validator(mode="after")
    def _subprocess_runtime_only(self) -> LocalEnvConfig:
        check_local(self.agent.runtime)
        check_tool_only(self.agent.harness)
        return self


def check_local(runtime: Any) -> None:
    """Refuse a runtime other than the subprocess one (a runtime config, or a runtime)."""
    config = getattr(runtime, "config", runtime)  # a runtime has its config; a config has none
    kind = getattr(config, "type", None)
    if kind != "subprocess":
        raise ValueError(LOCAL_ONLY.format(runtime=kind or type(runtime).__name__))


def check_tool_only(harness: Any) -> None:
    """Refuse a harness that executes code (None is the taskset's own, tool-only harness)."""
    if harness is None:
        return
    from verifiers.v1.utils.loaders import harness_class

    try:
        cls = harness_class(harness.id)
    except Exception:  # an unknown id: verifiers names it when it loads the harness
        return
    if getattr(cls, "EXECUTES_CODE", True):
        raise ValueError(NO_CODE_HARNESS.format(harness=harness.id))


class LocalEnv(SingleAgentEnv, Env[LocalEnvConfig]):
    """The single-agent env, on a local runtime."""

    def __init__(self, config: LocalEnvConfig) -> None:
        check_local(config.agent.runtime)  # also when handed a config built without checks
        check_tool_only(config.agent.harness)
        super().__init__(config)
