"""The SQL kit: a read-only sandbox for agent-written queries and the `run_sql` toolset."""

from datagauntlet.kits.sql.sandbox import QueryResult, SandboxLimits, SqlRefused, SqlSandbox
from datagauntlet.kits.sql.toolset import SqlToolset

__all__ = ["QueryResult", "SandboxLimits", "SqlRefused", "SqlSandbox", "SqlToolset"]
