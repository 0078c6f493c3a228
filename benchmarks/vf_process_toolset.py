"""The per-rollout-process alternative, for the benchmark only: verifiers' default placement,
where each rollout's toolset is a fresh `python -m` server process. Its one tool answers at
once, so what the benchmark times is the launch itself."""

import verifiers.v1 as vf
from verifiers.v1.mcp import Toolset, ToolsetConfig


class ProbeToolset(Toolset[ToolsetConfig, vf.State]):
    TOOL_PREFIX = None

    @vf.tool
    def ping(self) -> str:
        """Answer at once."""
        return "pong"


if __name__ == "__main__":
    ProbeToolset.run()
