"""The workspace kit: `read_file`, `write_file` and `list_files` confined to one directory."""

from datagauntlet.kits.workspace.toolset import WorkspaceToolset

__all__ = ["WorkspaceToolset"]
