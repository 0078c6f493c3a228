"""datagauntlet: verifiable data-integration environments where the tools fail quietly.

    import datagauntlet as dg
    env = dg.make("dirty-integration", profile="hostile")
    ep = env.episode(env.tasks("eval", 1)[0])
    ep.call("fetch_page", {"cursor": None})

Only the standard library is imported here; front doors (openai, verifiers, mcp) load lazily.
"""

from datagauntlet.core.conformance import check_env
from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Episode, Task, ToolError
from datagauntlet.core.registry import list_envs, make
from datagauntlet.core.score import Score
from datagauntlet.core.version import PACKAGE_VERSION

__version__ = PACKAGE_VERSION

__all__ = [
    "Environment",
    "Episode",
    "Score",
    "Task",
    "ToolError",
    "__version__",
    "check_env",
    "list_envs",
    "make",
]
