"""Workspaces: fresh copies for graded runs, and handing a directory to the run's user."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def fresh_workspace(source: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """A new workspace under the sandbox's scratch directory, removed afterwards.

    With `source`, it starts as a copy: regular files by content (so a hard link to a file
    elsewhere becomes a file of its own), directories, and symlinks as symlinks (the walls,
    not the copy, decide where they may lead). Nothing an earlier run did to `source`'s copy
    can reach this one.
    """
    from datagauntlet.kits.sandbox.runtime import runtime

    root = Path(tempfile.mkdtemp(prefix="ws-", dir=runtime().scratch))
    try:
        if source is not None:
            src = Path(source)
            if not src.is_dir():
                raise ValueError(f"workspace to copy is not a directory: {src}")
            _copy_tree(src, root)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _copy_tree(src: Path, dst: Path) -> None:
    for entry in os.scandir(src):
        target = dst / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        elif entry.is_dir(follow_symlinks=False):
            target.mkdir()
            _copy_tree(Path(entry.path), target)
        elif entry.is_file(follow_symlinks=False):
            shutil.copyfile(entry.path, target, follow_symlinks=False)
        # sockets, fifos and devices are not carried over


Owners = dict[str, tuple[int, int, int]]  # path -> (uid, gid, mode) before the hand-over


def hand_over(workspace: Path, uid: int, gid: int) -> Owners:
    """Make `workspace` the run user's own, without following links out of it; returns what
    `give_back` needs to restore every owner afterwards.

    Files with more than one name are left as they are: a hard link planted from outside
    must not turn the outside file over to the sandbox.
    """
    if os.geteuid() != 0:
        return {}
    _check_reachable(workspace)
    top = os.lstat(workspace)
    owners: Owners = {str(workspace): (top.st_uid, top.st_gid, stat.S_IMODE(top.st_mode))}
    os.chown(workspace, uid, gid)
    os.chmod(workspace, 0o700)
    for dirpath, dirnames, filenames in os.walk(workspace):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                continue
            if stat.S_ISLNK(st.st_mode) or stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
                owners[path] = (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode))
                os.chown(path, uid, gid, follow_symlinks=False)
    return owners


def give_back(workspace: Path, owners: Owners, run_uid: int) -> None:
    """Undo `hand_over` once the run's processes are gone: each entry it handed over gets its
    owner back, and whatever the run made goes to the workspace's owner, so no file is left
    owned by a uid nobody has. Only entries the run's uid owns are touched, never through a
    link."""
    if not owners:
        return
    home_uid, home_gid, home_mode = owners[str(workspace)]
    for dirpath, dirnames, filenames in os.walk(workspace):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                if os.lstat(path).st_uid == run_uid:
                    uid, gid, _ = owners.get(path, (home_uid, home_gid, 0))
                    os.chown(path, uid, gid, follow_symlinks=False)
    with contextlib.suppress(OSError):
        os.chown(workspace, home_uid, home_gid, follow_symlinks=False)
        os.chmod(workspace, home_mode)


def _check_reachable(workspace: Path) -> None:
    for parent in workspace.parents:
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            raise ValueError(
                f"workspace {workspace} is not reachable by the sandbox's unprivileged user "
                f"({parent} is mode {stat.S_IMODE(os.stat(parent).st_mode):o}); "
                "run it in fresh_workspace(...) or under a directory others can enter"
            )
